package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// TestStartCarriesTheLastRun: the Start job of a schedule's run carries
// the last run's result or failure from its OrchestrationStarted, live
// and on replay.
func TestStartCarriesTheLastRun(t *testing.T) {
	t.Parallel()
	for _, start := range []Event{
		ScheduledStart("s:1", "Order", json.RawMessage(`1`), json.RawMessage(`{"n":2}`), nil),
		ScheduledStart("s:1", "Order", json.RawMessage(`1`), nil, &Failure{Message: "broke", Details: "at line 3"}),
	} {
		var got []abi.Job
		g := newGuest(func(_ *fakeGuest, j abi.Job) []abi.Command {
			got = append(got, j)
			return []abi.Command{complete(`"done"`)}
		})
		res, err := newExecution(g).Turn(TurnInput{Messages: []Event{start}, Now: at(0)})
		if err != nil || res.Err != nil {
			t.Fatal(err, res.Err)
		}
		if _, err := newExecution(g).Turn(TurnInput{History: res.NewEvents, Now: at(1)}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d jobs, want the start live and on replay", len(got))
		}
		for _, j := range got {
			f := j.Failure
			if j.Kind != abi.JobStart || string(j.Result) != string(start.Result) ||
				(start.Failure == nil) != (f == nil) || (f != nil && (f.Message != start.Failure.Message || f.Details != start.Failure.Details)) {
				t.Fatalf("the start job %+v; want the result %s and failure %+v of %+v", j, j.Result, start.Failure, start)
			}
		}
	}
}

// TestMessagesTheCallerDelivers pins the messages the engine makes for a
// store to deliver with facts only the store knows.
func TestMessagesTheCallerDelivers(t *testing.T) {
	t.Parallel()
	due := at(5)
	f := &Failure{Message: "broke"}
	raise := RaiseTask{ScheduleID: 5, InstanceID: "other", Name: "Ping", Data: json.RawMessage(`1`)}
	persistent := raise
	persistent.Persistent = true
	tests := []struct {
		name      string
		got, want Event
	}{
		{"start", StartMessage("i1", "Order", json.RawMessage(`1`)),
			Event{Kind: OrchestrationStarted, Name: "Order", InstanceID: "i1", Input: json.RawMessage(`1`)}},
		{"scheduled start after a result", ScheduledStart("s:1", "Order", json.RawMessage(`1`), json.RawMessage(`"ok"`), nil),
			Event{Kind: OrchestrationStarted, Name: "Order", InstanceID: "s:1", Input: json.RawMessage(`1`), Result: json.RawMessage(`"ok"`)}},
		{"scheduled start after an empty result", ScheduledStart("s:1", "Order", json.RawMessage(`1`), nil, nil),
			Event{Kind: OrchestrationStarted, Name: "Order", InstanceID: "s:1", Input: json.RawMessage(`1`), Result: json.RawMessage(`null`)}},
		{"scheduled start after a failure", ScheduledStart("s:1", "Order", json.RawMessage(`1`), nil, f),
			Event{Kind: OrchestrationStarted, Name: "Order", InstanceID: "s:1", Input: json.RawMessage(`1`), Failure: f}},
		{"child start", ChildTask{ScheduleID: 2, InstanceID: "i1~1:2", Name: "Ship", Input: json.RawMessage(`2`)}.Start(),
			Event{Kind: OrchestrationStarted, Name: "Ship", InstanceID: "i1~1:2", Input: json.RawMessage(`2`)}},
		{"child not started", ChildNotStarted(2, "Ship", `instance id "x" is already taken`),
			Event{Kind: SubOrchestrationFailed, ScheduleID: 2, Failure: &Failure{Message: `child orchestration "Ship" could not start: instance id "x" is already taken`}}},
		{"completed report", Report(3, StatusCompleted, json.RawMessage(`"ok"`), nil),
			Event{Kind: SubOrchestrationCompleted, ScheduleID: 3, Result: json.RawMessage(`"ok"`)}},
		{"failed report", Report(3, StatusFailed, nil, f), Event{Kind: SubOrchestrationFailed, ScheduleID: 3, Failure: f}},
		{"terminated report", Report(3, StatusTerminated, nil, f), Event{Kind: SubOrchestrationFailed, ScheduleID: 3, Failure: f}},
		{"timer", TimerTask{ScheduleID: 4, FireAt: due}.Fired(), Event{Kind: TimerFired, ScheduleID: 4, FireAt: &due}},
		{"raised event", raise.Message(), Event{Kind: ExternalEvent, Name: "Ping", Result: json.RawMessage(`1`)}},
		{"raised persistent event", persistent.Message(), Event{Kind: ExternalEventPersistent, Name: "Ping", Result: json.RawMessage(`1`)}},
		{"raise delivered", raise.Delivered(), Event{Kind: ExternalEventDelivered, ScheduleID: 5}},
		{"raise not delivered", raise.NotDelivered("it does not exist"), Event{Kind: ExternalEventNotDelivered, ScheduleID: 5,
			Failure: &Failure{Message: `event "Ping" was not delivered to instance "other": it does not exist`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", tt.got, tt.want)
			}
		})
	}
}

// TestOutlivesExecution: of the messages an execution that continued as
// new left, the completions (which name its events) end with it.
func TestOutlivesExecution(t *testing.T) {
	t.Parallel()
	for kind, want := range map[EventKind]bool{
		ActivityCompleted: false, ActivityFailed: false, TimerFired: false, SubOrchestrationCompleted: false, SubOrchestrationFailed: false,
		ExternalEventDelivered: false, ExternalEventNotDelivered: false,
		ExternalEvent: true, ExternalEventPersistent: true, OrchestrationCancelRequested: true, OrchestrationTerminated: true,
	} {
		if got := OutlivesExecution(Event{Kind: kind}); got != want {
			t.Errorf("OutlivesExecution(%s) = %v; want %v", kind, got, want)
		}
	}
}

// TestGiveUp: an instance the host gives up on fails after its history,
// and a fresh execution that replays that history ends the same way.
func TestGiveUp(t *testing.T) {
	t.Parallel()
	handle := func(g *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{timer(time.Minute)}
		}
		return nil
	}
	history, _ := drive(t, handle, true, []step{{at(0), []Event{started(`1`)}}})
	f := &Failure{Message: "gave up"}
	res := GiveUp(int64(len(history)), at(1), f)
	want := &TurnResult{NewEvents: []Event{{ID: 3, Kind: OrchestrationFailed, Time: at(1), Failure: f}}, Status: StatusFailed, Failure: f}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("GiveUp = %+v\nwant %+v", res, want)
	}
	replayed, err := newExecution(newGuest(handle)).Turn(TurnInput{History: append(history, res.NewEvents...), Now: at(2)})
	if err != nil || replayed.Status != StatusFailed || !reflect.DeepEqual(replayed.Failure, f) {
		t.Fatalf("replaying the history it failed: %v, %s, %+v; want Failed, %+v", err, replayed.Status, replayed.Failure, f)
	}
}
