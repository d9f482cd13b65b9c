package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// TestWaiting: the turn's Waiting lists what the execution waits on after
// it, in the order it was scheduled, each with the time it began (a timer
// with its due time), the updates whose handlers have not answered after
// them; a wait that is answered or cancelled leaves the list, and an
// execution that ended waits on nothing.
func TestWaiting(t *testing.T) {
	t.Parallel()
	code := func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{activity("Charge", "1"), timer(time.Minute), wait("Approve"), waitPersistent("Note"),
				{Kind: abi.CommandStartChild, Name: "Ship", InstanceID: "ship-1"}}
		case abi.JobUpdate:
			return []abi.Command{activity("Refund", "2")}
		case abi.JobResolveEvent:
			return []abi.Command{complete(`"done"`)}
		}
		return nil
	}
	x := newExecution(newGuest(code))
	first, err := x.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil || first.Err != nil {
		t.Fatal(err, first.Err)
	}
	want := []Wait{
		{Kind: WaitActivity, ScheduleID: 2, Name: "Charge", Since: at(0)},
		{Kind: WaitTimer, ScheduleID: 3, Since: at(0), Due: fireAt(60)},
		{Kind: WaitEvent, ScheduleID: 4, Name: "Approve", Since: at(0)},
		{Kind: WaitEvent, ScheduleID: 5, Name: "Note", Persistent: true, Since: at(0)},
		{Kind: WaitChild, ScheduleID: 6, Name: "Ship", ID: "ship-1", Since: at(0)},
	}
	if !reflect.DeepEqual(first.Waiting, want) {
		t.Fatalf("after the first turn, waiting on\n%s\nwant\n%s", waitsJSON(first.Waiting), waitsJSON(want))
	}
	history := first.NewEvents
	second, err := x.Turn(TurnInput{History: history, Now: at(5),
		Messages: []Event{activityDone(2, `1`), UpdateRequest("u1", "Refund", json.RawMessage(`2`))}})
	if err != nil || second.Err != nil {
		t.Fatal(err, second.Err)
	}
	want = append(want[1:], Wait{Kind: WaitActivity, ScheduleID: 9, Name: "Refund", Since: at(5)},
		Wait{Kind: WaitUpdate, Name: "Refund", ID: "u1", Since: at(5)})
	if !reflect.DeepEqual(second.Waiting, want) {
		t.Fatalf("after the answer and the update, waiting on\n%s\nwant\n%s", waitsJSON(second.Waiting), waitsJSON(want))
	}
	history = append(history, second.NewEvents...)
	third, err := x.Turn(TurnInput{History: history, Now: at(6), Messages: []Event{raised("Approve", `true`)}})
	if err != nil || third.Err != nil || third.Status != StatusCompleted || third.Waiting != nil {
		t.Fatalf("once completed: %v, %v, status %s, waiting on %s; want none", err, third.Err, third.Status, waitsJSON(third.Waiting))
	}
}

func waitsJSON(ws []Wait) string {
	b, _ := json.MarshalIndent(ws, "", " ")
	return string(b)
}
