package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/durabox/durabox/abi"
)

// TestRefusedUpdateLeavesNoTrace: an update the orchestration refuses ends
// the turn with Rejected, naming the update's message and why, and
// nothing to commit for it; the Execution, which applied the refused
// update, takes no further turn.
func TestRefusedUpdateLeavesNoTrace(t *testing.T) {
	t.Parallel()
	x := newExecution(newGuest(updates))
	first, err := x.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	res, err := x.Turn(TurnInput{History: first.NewEvents, Now: at(1),
		Messages: []Event{raised("Other", `1`), UpdateRequest("u1", "Add", json.RawMessage(`-3`))}})
	if err != nil {
		t.Fatal(err)
	}
	want := UpdateRejection{Message: 1, UpdateID: "u1", Name: "Add", Failure: &Failure{Message: "a negative amount"}}
	if res.Rejected == nil || res.Rejected.Message != want.Message || res.Rejected.UpdateID != want.UpdateID ||
		res.Rejected.Name != want.Name || res.Rejected.Failure.Message != want.Failure.Message {
		t.Fatalf("rejected %+v; want %+v", res.Rejected, want)
	}
	if _, err := x.Begin(TurnInput{History: first.NewEvents, Now: at(2)}); err == nil || !strings.Contains(err.Error(), "refused an update") {
		t.Fatalf("a turn after the refusal began: %v; want it refused", err)
	}
	// A fresh Execution replays the history and runs the turn without the
	// refused update: the event is dropped (no wait for Other), nothing
	// recorded.
	again := newExecution(newGuest(updates))
	res, err = again.Turn(TurnInput{History: first.NewEvents, Now: at(1), Messages: []Event{raised("Other", `1`)}})
	if err != nil || res.Err != nil || res.Rejected != nil || len(res.NewEvents) != 0 {
		t.Fatalf("turn again: %v, %+v", err, res)
	}
}

// TestUpdateCommandsTheGuestMisuses: a RejectUpdate beside other commands,
// or for another update, or in answer to anything but the update's
// delivery, and a CompleteUpdate of an update not open, fail the instance
// as guest SDK bugs.
func TestUpdateCommandsTheGuestMisuses(t *testing.T) {
	t.Parallel()
	answer := func(cmds ...abi.Command) func(*fakeGuest, abi.Job) []abi.Command {
		return func(g *fakeGuest, j abi.Job) []abi.Command {
			if j.Kind == abi.JobStart {
				return []abi.Command{wait("Done")}
			}
			return cmds
		}
	}
	for _, tc := range []struct {
		name string
		code func(*fakeGuest, abi.Job) []abi.Command
		msg  Event
		want string
	}{
		{"refused beside another command", answer(activity("Charge", "1"), refuse("u1", "no")), UpdateRequest("u1", "Add", nil), "among 2 commands"},
		{"another update refused", answer(refuse("u2", "no")), UpdateRequest("u1", "Add", nil), `RejectUpdate("u2", "no")`},
		{"refused on an event", answer(refuse("u1", "no")), raised("Done", `1`), "a RejectUpdate naming it"},
		{"an update never accepted answered", answer(abi.Command{Kind: abi.CommandCompleteUpdate, UpdateID: "u9"}), UpdateRequest("u1", "Add", nil), `"u9" is not an update the execution accepted`},
		{"an update with no id answered", answer(abi.Command{Kind: abi.CommandCompleteUpdate}), UpdateRequest("u1", "Add", nil), "update id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := newExecution(newGuest(tc.code))
			first, err := x.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
			if err != nil || first.Err != nil {
				t.Fatal(err, first.Err)
			}
			res, err := x.Turn(TurnInput{History: first.NewEvents, Now: at(1), Messages: []Event{tc.msg}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), tc.want) || res.Rejected != nil {
				t.Fatalf("status %s, err %v, rejected %+v; want Failed with %q", res.Status, res.Err, res.Rejected, tc.want)
			}
		})
	}
}

// TestUpdateOnceAnExecution: an update id the execution accepted already
// is dropped, not delivered again; updates waiting when the execution
// continues as new go on to the next one.
func TestUpdateOnceAnExecution(t *testing.T) {
	t.Parallel()
	x := newExecution(newGuest(updates))
	first, err := x.Turn(TurnInput{Messages: []Event{started(`null`), UpdateRequest("u1", "Add", json.RawMessage(`5`))}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	res, err := x.Turn(TurnInput{History: first.NewEvents, Now: at(1), Messages: []Event{UpdateRequest("u1", "Add", json.RawMessage(`5`))}})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if len(res.NewEvents) != 0 || len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0].Reason, "already accepted") {
		t.Fatalf("new events %+v, dropped %+v; want the second u1 dropped", res.NewEvents, res.Dropped)
	}

	eternal := func(g *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{{Kind: abi.CommandContinueAsNew, Output: []byte(`2`)}}
		}
		return nil
	}
	y := newExecution(newGuest(eternal))
	res, err = y.Turn(TurnInput{Messages: []Event{started(`1`), UpdateRequest("u2", "Add", json.RawMessage(`1`))}, Now: at(0)})
	if err != nil || res.Err != nil || res.ContinueAsNew == nil {
		t.Fatal(err, res.Err, res.ContinueAsNew)
	}
	if c := res.ContinueAsNew.Carried; len(c) != 1 || c[0].Kind != UpdateAccepted || c[0].UpdateID != "u2" {
		t.Fatalf("carried %+v; want update u2", c)
	}
}

// TestRefusedUpdateOnReplayIsNondeterminism is the golden corpus's case
// by the error's type: errors.As finds the code.
func TestRefusedUpdateOnReplayIsNondeterminism(t *testing.T) {
	t.Parallel()
	x := newExecution(newGuest(updates))
	first, err := x.Turn(TurnInput{Messages: []Event{started(`null`), UpdateRequest("u1", "Add", json.RawMessage(`5`))}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	y := newExecution(newGuest(refusingCode.handle))
	res, err := y.Turn(TurnInput{History: first.NewEvents, Now: at(1)})
	var nd *NondeterminismError
	if err != nil || !errors.As(res.Err, &nd) || nd.Code != RefusedUpdate || res.Rejected != nil {
		t.Fatalf("%v, %v, rejected %+v; want a refused-update nondeterminism", err, res.Err, res.Rejected)
	}
}
