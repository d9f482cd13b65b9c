package engine

import (
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
)

// fakeGuest stands in for a wasm guest: handle is the orchestration, written
// as a reaction to each job. It numbers commands as the SDK does and keeps
// every activation it received.
type fakeGuest struct {
	seq         uint64
	state       map[string]int
	handle      func(g *fakeGuest, j abi.Job) []abi.Command
	activations []abi.Activation
	// replies are the commands of each activation, as numbered.
	replies [][]abi.Command
	crash   error
}

func newGuest(handle func(g *fakeGuest, j abi.Job) []abi.Command) *fakeGuest {
	return &fakeGuest{handle: handle, state: map[string]int{}}
}

func (g *fakeGuest) Activate(a *abi.Activation) ([]abi.Command, error) {
	g.activations = append(g.activations, *a)
	if g.crash != nil {
		return nil, g.crash
	}
	var out []abi.Command
	for _, j := range a.Jobs {
		for _, c := range g.handle(g, j) {
			g.seq++
			c.Seq = g.seq
			out = append(out, c)
		}
	}
	g.replies = append(g.replies, out)
	return out, nil
}

// patched answers as the guest SDK's Context.Patched does: true when the
// step's history records the change, or when the step is new; the first
// answer holds for the rest of the execution. It returns the Patch command
// to emit the first time it answers true.
func (g *fakeGuest) patched(id string) (bool, []abi.Command) {
	key := "patch:" + id
	if v, ok := g.state[key]; ok {
		return v == 1, nil
	}
	a := &g.activations[len(g.activations)-1]
	if !slices.Contains(a.Patches, id) && a.Replaying {
		g.state[key] = 0
		return false, nil
	}
	g.state[key] = 1
	return true, []abi.Command{{Kind: abi.CommandPatch, Name: id}}
}

func activity(name, input string) abi.Command {
	return abi.Command{Kind: abi.CommandScheduleActivity, Name: name, Input: []byte(input)}
}

func timer(d time.Duration) abi.Command {
	return abi.Command{Kind: abi.CommandStartTimer, Delay: int64(d)}
}

func complete(output string) abi.Command {
	return abi.Command{Kind: abi.CommandComplete, Output: []byte(output)}
}

func fail(msg string) abi.Command {
	return abi.Command{Kind: abi.CommandFail, Failure: &abi.Failure{Message: msg}}
}

// hello calls SayHello with its input and completes with the result.
func hello(_ *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{activity("SayHello", string(j.Input))}
	case abi.JobResolveActivity:
		if j.Failure != nil {
			return []abi.Command{fail("SayHello failed: " + j.Failure.Message)}
		}
		return []abi.Command{complete(string(j.Result))}
	}
	return nil
}

// retry is the walkthrough of reference 002: up to three attempts of
// FlakyTask with a one-second timer between them.
func retry(g *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		g.state["attempt"] = 1
		return []abi.Command{activity("FlakyTask", "1")}
	case abi.JobResolveActivity:
		if j.Failure == nil {
			return []abi.Command{complete(string(j.Result))}
		}
		if g.state["attempt"] == 3 {
			return []abi.Command{fail("all attempts failed")}
		}
		return []abi.Command{timer(time.Second)}
	case abi.JobFireTimer:
		g.state["attempt"]++
		return []abi.Command{activity("FlakyTask", string(rune('0'+g.state["attempt"])))}
	}
	return nil
}

// fanOut schedules two activities at once and completes when both are done,
// with their results in schedule order.
func fanOut(g *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{activity("A", "null"), activity("B", "null")}
	case abi.JobResolveActivity:
		g.state["done"]++
		if g.state["done"] == 2 {
			return []abi.Command{complete(`"both"`)}
		}
	}
	return nil
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func fireAt(sec int) *time.Time { t := at(sec); return &t }

func started(input string) Event {
	return StartMessage("i1", "Test", json.RawMessage(input))
}

func activityDone(schedule int64, result string) Event {
	return Event{Kind: ActivityCompleted, ScheduleID: schedule, Result: json.RawMessage(result)}
}

func activityFailed(schedule int64, msg string) Event {
	return Event{Kind: ActivityFailed, ScheduleID: schedule, Failure: &Failure{Message: msg}}
}

func timerFired(schedule int64, sec int) Event {
	return Event{Kind: TimerFired, ScheduleID: schedule, FireAt: fireAt(sec)}
}

var errBoom = errors.New("boom")

// guest is what the tests drive an Execution with.
type guest interface {
	Activate(a *abi.Activation) ([]abi.Command, error)
}

// driven is an Execution and the guest that applies its activations, so
// that a test runs a whole turn in one call.
type driven struct {
	*Execution
	g guest
}

func newExecution(g guest) *driven { return &driven{NewExecution(), g} }

// Turn runs a turn of the execution on in, handing every activation to
// the guest.
func (d *driven) Turn(in TurnInput) (*TurnResult, error) {
	t, err := d.Begin(in)
	if err != nil {
		return nil, err
	}
	for a := t.Next(); a != nil; a = t.Next() {
		t.Answer(d.g.Activate(a))
	}
	return t.Result(), nil
}
