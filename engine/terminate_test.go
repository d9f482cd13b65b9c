package engine

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func terminate(reason string) Event { return Event{Kind: OrchestrationTerminated, Reason: reason} }

// parentOfTwo starts a child, a detached instance and a second child, and
// waits for an activity.
func parentOfTwo(_ *fakeGuest, j abi.Job) []abi.Command {
	if j.Kind != abi.JobStart {
		return nil
	}
	return []abi.Command{
		{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`1`)},
		{Kind: abi.CommandStartChild, Name: "Audit", Input: []byte(`2`), Detached: true},
		{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`3`)},
		activity("Slow", "null"),
	}
}

func TestTerminate(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{true, false} {
		history, results := drive(t, parentOfTwo, live, []step{
			{at(0), []Event{started(`null`)}},
			{at(1), []Event{{Kind: SubOrchestrationCompleted, ScheduleID: 4, Result: json.RawMessage(`"three"`)}}},
			{at(2), []Event{terminate("stuck"), activityDone(5, `"late"`), raised("X", `1`)}},
		})
		want := []EventKind{OrchestrationStarted, SubOrchestrationScheduled, OrchestrationChained, SubOrchestrationScheduled, ActivityScheduled, SubOrchestrationCompleted, OrchestrationTerminated}
		if got := kinds(history); !reflect.DeepEqual(got, want) {
			t.Fatalf("live=%v history %v", live, got)
		}
		last := results[2]
		if last.Status != StatusTerminated || !reflect.DeepEqual(last.Failure, &Failure{Message: "terminated: stuck"}) || last.Result != nil {
			t.Fatalf("live=%v status %s failure %+v result %s", live, last.Status, last.Failure, last.Result)
		}
		// The child still running ends with its parent; the one that
		// completed and the detached instance are left alone.
		if !reflect.DeepEqual(last.TerminateChildren, []string{"i1~1:2"}) {
			t.Fatalf("live=%v children terminated %q, want [i1~1:2]", live, last.TerminateChildren)
		}
		if len(last.Activities) != 0 || len(last.Dropped) != 2 || last.Dropped[0].Reason != "the instance is already Terminated" {
			t.Fatalf("live=%v activities %+v dropped %+v", live, last.Activities, last.Dropped)
		}
	}
}

// TestTerminateIsNotSeen: the orchestration gets no activation for a
// termination, and a history that ends with one replays to Terminated.
func TestTerminateIsNotSeen(t *testing.T) {
	t.Parallel()
	g := newGuest(hello)
	x := newExecution(g)
	res, err := x.Turn(TurnInput{Messages: []Event{started(`"world"`), terminate("")}, Now: at(0)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if len(g.activations) != 1 || res.Status != StatusTerminated || res.Failure.Message != "terminated" {
		t.Fatalf("%d activations, status %s, failure %+v; want the start's only, Terminated", len(g.activations), res.Status, res.Failure)
	}
	replay, err := newExecution(newGuest(hello)).Turn(TurnInput{History: res.NewEvents, Messages: []Event{activityDone(2, `"hi"`)}, Now: at(1)})
	if err != nil || replay.Err != nil || replay.Status != StatusTerminated || len(replay.NewEvents) != 0 || len(replay.TerminateChildren) != 0 {
		t.Fatalf("replay: %v %v %+v", err, replay.Err, replay)
	}
}

// TestRequestsAfterContinueAsNewGoOn: a termination, a cancellation or a
// persistent event that arrives in the turn that continues as new is the
// instance's: it goes to the next execution; other messages are dropped.
func TestRequestsAfterContinueAsNewGoOn(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		return []abi.Command{{Kind: abi.CommandContinueAsNew, Output: []byte(`2`)}}
	}
	cancel := Event{Kind: OrchestrationCancelRequested, Reason: "enough"}
	_, results := drive(t, handle, true, []step{
		{at(0), []Event{started(`1`), raised("Y", `"gone"`), cancel, raisedPersistent("X", `"a"`), terminate("stop")}},
	})
	want := &ContinueAsNew{Input: json.RawMessage(`2`), Started: started(`2`), Carried: []Event{cancel, raisedPersistent("X", `"a"`), terminate("stop")}}
	if res := results[0]; !reflect.DeepEqual(res.ContinueAsNew, want) || len(res.Dropped) != 1 || res.Dropped[0].Message.Name != "Y" {
		t.Fatalf("continue as new %+v, dropped %+v", res.ContinueAsNew, res.Dropped)
	}
}

// TestTimerBeyondMaxTime: a timer past what a store can keep is due at
// MaxTime, never earlier.
func TestTimerBeyondMaxTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		delay time.Duration
		want  time.Time
	}{
		{"the longest duration", math.MaxInt64, MaxTime},
		{"past 2262", 250 * 365 * 24 * time.Hour, MaxTime},
		{"just before MaxTime", MaxTime.Sub(t0) - time.Nanosecond, MaxTime.Add(-time.Nanosecond)},
		{"an hour", time.Hour, t0.Add(time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handle := func(_ *fakeGuest, j abi.Job) []abi.Command { return []abi.Command{timer(tt.delay)} }
			res, err := newExecution(newGuest(handle)).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: t0})
			if err != nil || res.Err != nil {
				t.Fatal(err, res.Err)
			}
			if len(res.Timers) != 1 || !res.Timers[0].FireAt.Equal(tt.want) || !res.NewEvents[1].FireAt.Equal(tt.want) {
				t.Fatalf("timers %+v, event %+v; want due at %s", res.Timers, res.NewEvents[1], tt.want)
			}
			if due := res.Timers[0].FireAt.UnixNano(); due < t0.UnixNano() {
				t.Fatalf("due at %d Unix nanoseconds, before the turn: a store would fire it at once", due)
			}
		})
	}
}
