package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/durabox/durabox/abi"
)

// TestRaiseIsWorkUntilItsOutcomeComes: a turn that raises events hands
// the caller one RaiseTask each, to deliver with its commit; the raise is an
// open operation, so an orchestration that waits on nothing else is not
// failed for waiting on nothing, and its outcome resolves it.
func TestRaiseIsWorkUntilItsOutcomeComes(t *testing.T) {
	t.Parallel()
	x := newExecution(newGuest(raiser))
	first, err := x.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	want := []RaiseTask{
		{ScheduleID: 2, InstanceID: "other", Name: "Ping", Data: json.RawMessage(`1`)},
		{ScheduleID: 3, InstanceID: "gone", Name: "Ping", Data: json.RawMessage(`1`), Persistent: true},
	}
	if first.Status != StatusRunning || !reflect.DeepEqual(first.Raises, want) {
		t.Fatalf("status %s, raises %+v\nwant Running, %+v", first.Status, first.Raises, want)
	}
	second, err := x.Turn(TurnInput{History: first.NewEvents, Now: at(1),
		Messages: []Event{want[0].Delivered(), want[1].NotDelivered("it has finished (Completed)"), want[1].Delivered()}})
	if err != nil || second.Err != nil {
		t.Fatal(err, second.Err)
	}
	if second.Status != StatusCompleted || string(second.Result) != `{"failed":1}` {
		t.Fatalf("status %s, result %s; want Completed, {\"failed\":1}", second.Status, second.Result)
	}
	// The third message, a second outcome of the same raise, finds the
	// instance already completed.
	if len(second.Dropped) != 1 || second.Dropped[0].Message.Kind != ExternalEventDelivered {
		t.Fatalf("dropped %+v; want the duplicate outcome", second.Dropped)
	}
}

// TestRaiseOutcomeDuplicateIsDropped: an outcome for a raise that already
// has one is not applied twice.
func TestRaiseOutcomeDuplicateIsDropped(t *testing.T) {
	t.Parallel()
	once := func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{raiseAt("other", "Ping", false), wait("Done")}
		}
		return nil
	}
	x := newExecution(newGuest(once))
	first, err := x.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	r := first.Raises[0]
	history := first.NewEvents
	second, err := x.Turn(TurnInput{History: history, Messages: []Event{r.Delivered(), r.Delivered()}, Now: at(1)})
	if err != nil || second.Err != nil {
		t.Fatal(err, second.Err)
	}
	if len(second.NewEvents) != 1 || len(second.Dropped) != 1 || second.Status != StatusRunning {
		t.Fatalf("new events %+v, dropped %+v, status %s; want one outcome recorded and one dropped", second.NewEvents, second.Dropped, second.Status)
	}
}
