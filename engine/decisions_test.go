package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// The rules the references leave open or state differently, as Durabox
// decides them (engine/CONFORMANCE.md lists them with the references).

// TestCorruptHistoryIsRefused: a history an engine never writes is refused
// before any of it reaches the orchestration, and nothing is recorded.
func TestCorruptHistoryIsRefused(t *testing.T) {
	t.Parallel()
	sayHello := scheduled("SayHello", `"world"`)
	renumber := func(events []Event, ids ...int64) []Event {
		for i, id := range ids {
			events[i].ID = id
		}
		return events
	}
	tests := []struct {
		name    string
		history []Event
		want    string
	}{
		{"it begins with something else", hist(sayHello, activityDone(1, `"hi"`)),
			"engine: history is corrupt: event 1, ActivityScheduled, comes before the execution's OrchestrationStarted"},
		{"its first id is not 1", renumber(hist(started(`"world"`), sayHello), 2, 3),
			"engine: history is corrupt: its first event has id 2, not 1"},
		{"an id is missing", renumber(hist(started(`"world"`), sayHello, activityDone(2, `"hi"`)), 1, 2, 4),
			"engine: history is corrupt: event 4 follows event 2 (ids run from 1 without gaps)"},
		{"an id repeats", renumber(hist(started(`"world"`), sayHello, activityDone(2, `"hi"`)), 1, 2, 2),
			"engine: history is corrupt: event 2 follows event 2 (ids run from 1 without gaps)"},
		{"a second start", hist(started(`"world"`), sayHello, started(`"again"`)),
			"engine: history is corrupt: event 3 is a second OrchestrationStarted"},
		{"an event after the end", hist(started(`"world"`), sayHello, Event{Kind: OrchestrationFailed, Failure: &Failure{Message: "crashed"}}, activityDone(2, `"hi"`)),
			"engine: history is corrupt: event 4, ActivityCompleted, follows the end of the execution (event 3, OrchestrationFailed)"},
		// What a damaged row decodes to: every field it lacks is zero.
		{"a kind no engine writes", hist(started(`"world"`), Event{Kind: "ActivityDone", ScheduleID: 2}),
			`engine: history is corrupt: event 2 is of kind "ActivityDone", which no engine writes`},
		{"an activity's failure without its failure", hist(started(`"world"`), sayHello, Event{Kind: ActivityFailed, ScheduleID: 2}),
			"engine: history is corrupt: event 3, ActivityFailed, has no failure"},
		{"a child's failure without its failure", hist(started(`"world"`), Event{Kind: SubOrchestrationScheduled, Name: "Child"}, Event{Kind: SubOrchestrationFailed, ScheduleID: 2}),
			"engine: history is corrupt: event 3, SubOrchestrationFailed, has no failure"},
		{"the orchestration's failure without its failure", hist(started(`"world"`), Event{Kind: OrchestrationFailed}),
			"engine: history is corrupt: event 2, OrchestrationFailed, has no failure"},
		{"a timer without its fire time", hist(started(`"world"`), Event{Kind: TimerCreated}),
			"engine: history is corrupt: event 2, TimerCreated, has no fire time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuest(hello)
			res, err := newExecution(g).Turn(TurnInput{History: tt.history, Messages: []Event{activityDone(2, `"hi"`)}, Now: at(60)})
			if !errors.Is(err, ErrCorruptHistory) || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if res != nil || len(g.activations) != 0 {
				t.Fatalf("result %+v and %d activations, want none", res, len(g.activations))
			}
		})
	}
	// A live execution checks what extends the history it applied.
	g := newGuest(hello)
	x := newExecution(g)
	first, err := x.Turn(TurnInput{Messages: []Event{started(`"world"`)}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	gap := append(first.NewEvents, activityDone(2, `"hi"`))
	gap[2].ID, gap[2].Time = 4, at(1)
	if _, err := x.Turn(TurnInput{History: gap, Now: at(1)}); !errors.Is(err, ErrCorruptHistory) || err.Error() != "engine: history is corrupt: event 4 follows event 2 (ids run from 1 without gaps)" {
		t.Fatalf("err = %v", err)
	}
	// Refused, not broken: the real history still goes on.
	res, err := x.Turn(TurnInput{History: first.NewEvents, Messages: []Event{activityDone(2, `"hi"`)}, Now: at(1)})
	if err != nil || res.Status != StatusCompleted || len(g.activations) != 2 {
		t.Fatalf("after the refusal: %v, %+v, %d activations", err, res, len(g.activations))
	}
}

// TestExternalEventInHistoryNeedsItsWait: live, an event raised while no
// wait of its name is active never enters history (TestEventLanes); so an
// ExternalEvent in history whose wait replay has not opened (it was
// cancelled, is of another name or lane, or was never emitted) is not
// what the engine wrote for this code: nondeterminism, with the event shown.
func TestExternalEventInHistoryNeedsItsWait(t *testing.T) {
	t.Parallel()
	waitsX := func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{wait("X"), waitPersistent("P"), timer(time.Second)}
		case abi.JobFireTimer:
			return []abi.Command{{Kind: abi.CommandCancelWait, Target: 1}}
		}
		return nil
	}
	base := []Event{started(`null`), {Kind: ExternalSubscribed, Name: "X"}, {Kind: ExternalSubscribedPersistent, Name: "P"}, {Kind: TimerCreated, FireAt: fireAt(1)}}
	bound := func(name string, wait int64) Event {
		e := raised(name, `"data"`)
		e.ScheduleID = wait
		return e
	}
	tests := []struct {
		name    string
		history []Event
		want    string
	}{
		{"its wait was cancelled", hist(append(base, timerFired(4, 1), Event{Kind: ExternalSubscribedCancelled, ScheduleID: 2}, bound("X", 2))...),
			`nondeterminism at event 7: history has ExternalEvent("X", "data", for event 2), which completes no open operation`},
		{"its wait is for another name", hist(append(base, bound("Y", 2))...),
			`nondeterminism at event 5: history has ExternalEvent("Y", "data", for event 2), which completes no open operation`},
		{"its wait is persistent", hist(append(base, bound("P", 3))...),
			`nondeterminism at event 5: history has ExternalEvent("P", "data", for event 3), which completes no open operation`},
		{"it names no wait", hist(append(base, bound("X", 9))...),
			`nondeterminism at event 5: history has ExternalEvent("X", "data", for event 9), which completes no open operation`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newExecution(newGuest(waitsX)).Turn(TurnInput{History: tt.history, Now: at(60)})
			if err != nil {
				t.Fatal(err)
			}
			var nd *NondeterminismError
			if !errors.As(res.Err, &nd) || nd.Code != UnmatchedCompletion || res.Err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", res.Err, tt.want)
			}
			if res.Status != StatusFailed {
				t.Fatalf("status %s", res.Status)
			}
		})
	}
	// The same wait, bound by the engine as the event arrived, replays.
	live, err := newExecution(newGuest(waitsX)).Turn(TurnInput{Messages: []Event{started(`null`), raised("X", `"data"`)}, Now: at(0)})
	if err != nil || live.Err != nil {
		t.Fatal(err, live.Err)
	}
	if got := live.NewEvents[len(live.NewEvents)-1]; got.Kind != ExternalEvent || got.ScheduleID != 2 {
		t.Fatalf("the event was recorded as %s", got.String())
	}
	replay, err := newExecution(newGuest(waitsX)).Turn(TurnInput{History: live.NewEvents, Now: at(1)})
	if err != nil || replay.Err != nil {
		t.Fatal(err, replay.Err)
	}
}

// TestCancellationIsARequest: an orchestration sees its cancellation and
// decides how it ends. One that completes anyway is Completed, one that
// fails is Canceled, live and replayed; of a cancellation and a completion
// in one turn, the one that arrived first is applied first.
func TestCancellationIsARequest(t *testing.T) {
	t.Parallel()
	cancelRequested := Event{Kind: OrchestrationCancelRequested, Reason: "stop"}
	// work calls A; on cancellation it cancels A and ends as end says.
	work := func(end abi.Command) func(*fakeGuest, abi.Job) []abi.Command {
		return func(_ *fakeGuest, j abi.Job) []abi.Command {
			switch j.Kind {
			case abi.JobStart:
				return []abi.Command{activity("A", "null")}
			case abi.JobResolveActivity:
				return []abi.Command{complete(string(j.Result))}
			case abi.JobCancel:
				return []abi.Command{cancelActivity(1), end}
			}
			return nil
		}
	}
	tests := []struct {
		name        string
		end         abi.Command
		messages    []Event
		wantKinds   []EventKind
		wantStatus  Status
		wantDropped string
	}{
		{"ignored: it completes", complete(`"anyway"`), []Event{cancelRequested},
			[]EventKind{OrchestrationStarted, ActivityScheduled, OrchestrationCancelRequested, ActivityCancelRequested, OrchestrationCompleted}, StatusCompleted, ""},
		{"honoured: it fails", fail("cancelled: stop"), []Event{cancelRequested},
			[]EventKind{OrchestrationStarted, ActivityScheduled, OrchestrationCancelRequested, ActivityCancelRequested, OrchestrationCanceled}, StatusCanceled, ""},
		{"the completion first", fail("cancelled: stop"), []Event{activityDone(2, `"done"`), cancelRequested},
			[]EventKind{OrchestrationStarted, ActivityScheduled, ActivityCompleted, OrchestrationCompleted}, StatusCompleted, "the instance is already Completed"},
		{"the cancellation first", fail("cancelled: stop"), []Event{cancelRequested, activityDone(2, `"done"`)},
			[]EventKind{OrchestrationStarted, ActivityScheduled, OrchestrationCancelRequested, ActivityCancelRequested, OrchestrationCanceled}, StatusCanceled, "the instance is already Canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, live := range []bool{true, false} {
				history, results := drive(t, work(tt.end), live, []step{{at(0), []Event{started(`null`)}}, {at(1), tt.messages}})
				last := results[1]
				if got := kinds(history); !reflect.DeepEqual(got, tt.wantKinds) || last.Status != tt.wantStatus {
					t.Fatalf("live=%v: %v, status %s; want %v, %s", live, got, last.Status, tt.wantKinds, tt.wantStatus)
				}
				var dropped string
				if len(last.Dropped) > 0 {
					dropped = last.Dropped[0].Reason
				}
				if dropped != tt.wantDropped {
					t.Fatalf("live=%v: dropped %+v, want %q", live, last.Dropped, tt.wantDropped)
				}
				// The ended history replays to the same status.
				replay, err := newExecution(newGuest(work(tt.end))).Turn(TurnInput{History: history, Now: at(2)})
				if err != nil || replay.Err != nil || replay.Status != tt.wantStatus {
					t.Fatalf("live=%v: replay: %v, %v, %s", live, err, replay.Err, replay.Status)
				}
			}
		})
	}
}

// TestHistoryDecidesHowAnExecutionEnded: an ending the host recorded
// without a command (a turn given up on as poison, while the orchestration
// waited) replays as it is; an ending the orchestration emitted must be the
// one it emits again.
func TestHistoryDecidesHowAnExecutionEnded(t *testing.T) {
	t.Parallel()
	poisoned := hist(started(`"world"`), scheduled("SayHello", `"world"`), Event{Kind: OrchestrationFailed, Failure: &Failure{Message: "durabox gave up on the instance"}})
	res, err := newExecution(newGuest(hello)).Turn(TurnInput{History: poisoned, Messages: []Event{activityDone(2, `"hi"`)}, Now: at(9)})
	if err != nil || res.Err != nil || res.Status != StatusFailed || res.Failure.Message != "durabox gave up on the instance" || len(res.NewEvents) != 0 {
		t.Fatalf("%v, %+v", err, res)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Reason != "the instance is already Failed" {
		t.Fatalf("dropped %+v", res.Dropped)
	}
	completed := hist(started(`"world"`), scheduled("SayHello", `"world"`), activityDone(2, `"hi"`), Event{Kind: OrchestrationCompleted, Result: json.RawMessage(`"bye"`)})
	res, err = newExecution(newGuest(hello)).Turn(TurnInput{History: completed, Now: at(9)})
	const want = `nondeterminism at event 4: history has OrchestrationCompleted("bye"), the orchestration emitted CompleteOrchestration("hi")`
	if err != nil || res.Err == nil || res.Err.Error() != want {
		t.Fatalf("%v, %v; want %s", err, res.Err, want)
	}
}

// TestContinueAsNewCarriesAtMostTheLimit: the persistent events carried to
// the next execution, untaken ones and those raised after the execution
// continued as new, are kept in the order they arrived in, and past the
// limit of one execution the oldest are dropped, as the external-events
// reference says; the next execution takes every one carried.
func TestContinueAsNewCarriesAtMostTheLimit(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{timer(time.Second)}
		case abi.JobFireTimer:
			return []abi.Command{{Kind: abi.CommandContinueAsNew, Output: []byte(`2`)}}
		}
		return nil
	}
	first := []Event{started(`1`)}
	var want []Event
	for i := range MaxPersistentEvents / 2 {
		for _, name := range []string{"X", "Y"} {
			ev := raisedPersistent(name, fmt.Sprintf(`"%s%d"`, name, i))
			first = append(first, ev)
			want = append(want, ev)
		}
	}
	late := []Event{raisedPersistent("Z", `"Z0"`), raisedPersistent("Z", `"Z1"`), raisedPersistent("Z", `"Z2"`)}
	want = append(want[3:], late...)
	for _, live := range []bool{true, false} {
		_, results := drive(t, handle, live, []step{{at(0), first}, {at(1), append([]Event{timerFired(2, 1)}, late...)}})
		if d := results[0].Dropped; len(d) != 0 {
			t.Fatalf("live=%v: the first execution dropped %+v", live, d)
		}
		last := results[1]
		if last.Status != StatusContinuedAsNew || !reflect.DeepEqual(last.ContinueAsNew.Carried, want) {
			t.Fatalf("live=%v: carried %+v\nwant %+v", live, last.ContinueAsNew.Carried, want)
		}
		var dropped []string
		for _, d := range last.Dropped {
			dropped = append(dropped, string(d.Message.Result)+": "+d.Reason)
		}
		const reason = "the next execution takes 20 persistent events, the limit, and this one is older than those it takes"
		if !reflect.DeepEqual(dropped, []string{`"X0": ` + reason, `"Y0": ` + reason, `"X1": ` + reason}) {
			t.Fatalf("live=%v: dropped %q", live, dropped)
		}
		next, err := newExecution(newGuest(handle)).Turn(TurnInput{Messages: append([]Event{started(`2`)}, last.ContinueAsNew.Carried...), Now: at(2)})
		if err != nil || next.Err != nil || len(next.Dropped) != 0 {
			t.Fatalf("live=%v: the next execution: %v, %v, dropped %+v", live, err, next.Err, next.Dropped)
		}
	}
}
