package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// retryHistory is the retry walkthrough's history: started, an activity
// failed, a timer, the activity again, completed.
func retryHistory(t *testing.T) []Event {
	t.Helper()
	history, _ := drive(t, retry, true, retrySteps)
	return history
}

func TestPlanResetRefusesWhatIsNoResetPoint(t *testing.T) {
	t.Parallel()
	history := retryHistory(t) // 1 started, 2 scheduled, 3 failed, 4 timer, 5 fired, 6 scheduled, 7 completed, 8 completed
	moved := hist(Event{Kind: ModuleChanged, Module: "b", FromModule: "a"}, started(`null`), scheduled("A", "null"), scheduled("B", "null"))
	tests := []struct {
		name    string
		history []Event
		n       int64
		want    string
	}{
		{"before the history", history, 0, "engine: not a reset point: event 0 is not in the history, which has events 1 to 8"},
		{"past the history", history, 9, "engine: not a reset point: event 9 is not in the history, which has events 1 to 8"},
		{"the end of the execution", history, 8, "engine: not a reset point: event 8 (OrchestrationCompleted) ends the execution; reset to an event before it"},
		{"before the start", moved, 1, "engine: not a reset point: the execution starts at event 2; keep at least that"},
		{"in the middle of a step", moved, 3, "engine: not a reset point: event 3 (ActivityScheduled) is in the middle of the step that event 2 (OrchestrationStarted) began; " +
			"reset to event 2 to run that step again on the code the instance goes on with, or to event 4, where the step ends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PlanReset(tt.history, tt.n)
			if !errors.Is(err, ErrResetPoint) || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestPlanResetRefusesACorruptHistory: a reset plans from a history as the
// store holds it, which Turn has not checked. Kept events no engine writes
// are refused as Turn refuses them, not planned from (a timer without its
// fire time would have no time to fire at); a reset that discards them is
// planned.
func TestPlanResetRefusesACorruptHistory(t *testing.T) {
	t.Parallel()
	history := hist(started(`null`), Event{Kind: TimerCreated}, timerFired(2, 1))
	const want = "engine: history is corrupt: event 2, TimerCreated, has no fire time"
	if _, err := PlanReset(history, 2); !errors.Is(err, ErrCorruptHistory) || err.Error() != want {
		t.Fatalf("reset to event 2: err = %v\nwant %s", err, want)
	}
	if p, err := PlanReset(history, 1); err != nil || len(p.Kept) != 1 || len(p.Discarded) != 2 {
		t.Fatalf("reset to event 1: %+v, %v; want it planned, discarding events 2 and 3", p, err)
	}
}

func TestPlanReset(t *testing.T) {
	t.Parallel()
	history := retryHistory(t)
	// Event 4 ends the step of event 3 (the failure), which started the timer.
	p, err := PlanReset(history, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Kept) != 4 || len(p.Discarded) != 4 || p.Discarded[0].ID != 5 {
		t.Fatalf("kept %v, discarded %v", kinds(p.Kept), kinds(p.Discarded))
	}
	want := Work{Timers: []TimerTask{{ScheduleID: 4, FireAt: at(2)}}}
	if !reflect.DeepEqual(p.InFlight, want) {
		t.Errorf("in flight %+v, want %+v", p.InFlight, want)
	}

	// An activity in flight, a child in flight, a cancelled timer, and
	// events raised from outside in the discarded part (the cancellation
	// request is not raised again).
	h := hist(started(`null`),
		scheduled("A", `1`),
		Event{Kind: SubOrchestrationScheduled, Name: "Kid", InstanceID: "i1~1:3", Input: json.RawMessage(`2`)},
		Event{Kind: TimerCreated, FireAt: fireAt(9)},
		Event{Kind: ExternalSubscribed, Name: "Go"},
		Event{Kind: TimerCancelled, ScheduleID: 4},
		Event{Kind: ExternalEvent, Name: "Go", Result: json.RawMessage(`"now"`), ScheduleID: 5},
		Event{Kind: ExternalEventPersistent, Name: "Note", Result: json.RawMessage(`1`)},
		Event{Kind: OrchestrationCancelRequested, Reason: "enough"},
		activityDone(2, `"a"`))
	p, err = PlanReset(h, 6)
	if err != nil {
		t.Fatal(err)
	}
	want = Work{
		Activities: []ActivityTask{{ScheduleID: 2, Name: "A", Input: json.RawMessage(`1`)}},
		Children:   []ChildTask{{ScheduleID: 3, InstanceID: "i1~1:3", Name: "Kid", Input: json.RawMessage(`2`)}},
	}
	if !reflect.DeepEqual(p.InFlight, want) {
		t.Errorf("in flight %+v, want %+v", p.InFlight, want)
	}
	wantRaise := []Event{
		{Kind: ExternalEvent, Name: "Go", Result: json.RawMessage(`"now"`)},
		{Kind: ExternalEventPersistent, Name: "Note", Result: json.RawMessage(`1`)},
	}
	if !reflect.DeepEqual(p.Raise, wantRaise) {
		t.Errorf("raise %+v, want %+v", p.Raise, wantRaise)
	}
}

// TestResetRunsTheLastKeptStepAnew: the first turn of a reset execution
// replays the kept steps, runs the last one as new (not replaying, so the
// guest logs it and takes new code paths), records the marker and then the
// step's commands; later turns replay it all.
func TestResetRunsTheLastKeptStepAnew(t *testing.T) {
	t.Parallel()
	history := retryHistory(t)
	p, err := PlanReset(history, 3) // keep the failure, discard its timer
	if err != nil {
		t.Fatal(err)
	}
	marker := Event{Kind: ExecutionReset, Module: "m2", FromModule: "m1", SeedExecution: 1, Reason: "reset from execution 1 to event 3"}
	g := newGuest(retry)
	res, err := newExecution(g).Turn(TurnInput{History: p.Kept, Messages: []Event{marker}, Now: at(20)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if got := []bool{g.activations[0].Replaying, g.activations[1].Replaying}; !reflect.DeepEqual(got, []bool{true, false}) {
		t.Errorf("replaying flags of the two activations %v, want [true false]", got)
	}
	if got := kinds(res.NewEvents); !reflect.DeepEqual(got, []EventKind{ExecutionReset, TimerCreated}) {
		t.Fatalf("new events %v", got)
	}
	if res.NewEvents[0].ID != 4 || res.NewEvents[1].ID != 5 || len(res.Timers) != 1 || res.Timers[0].ScheduleID != 5 {
		t.Errorf("new events %+v, timers %+v", res.NewEvents, res.Timers)
	}
	// The timer is due a second after the kept failure, as it was.
	if !res.Timers[0].FireAt.Equal(at(2)) {
		t.Errorf("timer due %s", res.Timers[0].FireAt)
	}
	after := append(p.Kept, res.NewEvents...)
	res, err = newExecution(newGuest(retry)).Turn(TurnInput{History: after, Messages: []Event{timerFired(5, 30)}, Now: at(30)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if got := kinds(res.NewEvents); !reflect.DeepEqual(got, []EventKind{TimerFired, ActivityScheduled}) {
		t.Fatalf("the next turn's new events %v", got)
	}

	// Without the marker, the kept history ends in the middle of a step.
	res, err = newExecution(newGuest(retry)).Turn(TurnInput{History: p.Kept, Now: at(20)})
	if err != nil || res.Err == nil {
		t.Fatalf("the kept history replayed without its marker: err %v, result err %v", err, res.Err)
	}
	// A guest that has applied the kept history already cannot run its
	// last step anew.
	x := newExecution(newGuest(retry))
	if _, err := x.Turn(TurnInput{History: p.Kept[:2], Messages: []Event{activityFailed(2, "flaky")}, Now: at(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Turn(TurnInput{History: p.Kept, Messages: []Event{marker}, Now: at(20)}); !errors.Is(err, ErrStale) {
		t.Fatalf("err = %v, want ErrStale", err)
	}
}

// TestAMoveIsBetweenSteps: a ModuleChanged where commands are pending is a
// corrupt history, reported as nondeterminism.
func TestAMoveIsBetweenSteps(t *testing.T) {
	t.Parallel()
	h := hist(started(`"world"`), Event{Kind: ModuleChanged, Module: "b", FromModule: "a"}, scheduled("SayHello", `"world"`))
	res, err := newExecution(newGuest(hello)).Turn(TurnInput{History: h, Now: at(9)})
	if err != nil {
		t.Fatal(err)
	}
	const want = `nondeterminism at event 2: history has ModuleChanged(a → b), the orchestration emitted ScheduleActivity("SayHello", "world"), which history does not have`
	if res.Err == nil || res.Err.Error() != want {
		t.Fatalf("err = %v\nwant %s", res.Err, want)
	}
}

func TestPatchedAnswersPerExecution(t *testing.T) {
	t.Parallel()
	// Asks twice: one answer, one marker.
	handle := func(g *fakeGuest, j abi.Job) []abi.Command {
		var out []abi.Command
		for range 2 {
			_, cmds := g.patched("x")
			out = append(out, cmds...)
		}
		if j.Kind == abi.JobStart {
			return append(out, timer(time.Second))
		}
		return append(out, complete(`"ok"`))
	}
	live, _ := drive(t, handle, true, []step{{at(0), []Event{started(`null`)}}, {at(1), []Event{timerFired(3, 1)}}})
	if got := kinds(live); !reflect.DeepEqual(got, []EventKind{OrchestrationStarted, PatchRecorded, TimerCreated, TimerFired, OrchestrationCompleted}) {
		t.Fatalf("history %v", got)
	}
}
