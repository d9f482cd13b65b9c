package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// TestWaiting: the turn's WaitingOn names the kinds of what the execution
// waits on after it, and Waits lists its waits beside its activity calls
// in the order they were scheduled, each with the time it began (a timer
// with its due time), the updates whose handlers have not answered after
// them; a wait that is answered or cancelled leaves them, and an
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
		{Kind: WaitTimer, ScheduleID: 3, Since: at(0), Due: fireAt(60)},
		{Kind: WaitEvent, ScheduleID: 4, Name: "Approve", Since: at(0)},
		{Kind: WaitEvent, ScheduleID: 5, Name: "Note", Persistent: true, Since: at(0)},
		{Kind: WaitChild, ScheduleID: 6, Name: "Ship", ID: "ship-1", Since: at(0)},
	}
	wantWaiting(t, "after the first turn", first, []WaitKind{WaitActivity, WaitTimer, WaitEvent, WaitChild}, want)
	history := first.NewEvents
	second, err := x.Turn(TurnInput{History: history, Now: at(5),
		Messages: []Event{activityDone(2, `1`), UpdateRequest("u1", "Refund", json.RawMessage(`2`))}})
	if err != nil || second.Err != nil {
		t.Fatal(err, second.Err)
	}
	want = append(want, Wait{Kind: WaitUpdate, Name: "Refund", ID: "u1", Since: at(5)})
	wantWaiting(t, "after the answer and the update", second, []WaitKind{WaitActivity, WaitTimer, WaitEvent, WaitUpdate, WaitChild}, want)
	history = append(history, second.NewEvents...)
	third, err := x.Turn(TurnInput{History: history, Now: at(6), Messages: []Event{raised("Approve", `true`)}})
	if err != nil || third.Err != nil || third.Status != StatusCompleted || third.WaitingOn != nil || third.Waits != nil {
		t.Fatalf("once completed: %v, %v, status %s, waiting on %v: %s; want none", err, third.Err, third.Status, third.WaitingOn, waitsJSON(third.Waits))
	}
}

// wantWaiting fails t unless res waits on the kinds on and lists waits.
func wantWaiting(t *testing.T, when string, res *TurnResult, on []WaitKind, waits []Wait) {
	t.Helper()
	if !reflect.DeepEqual(res.WaitingOn, on) || !reflect.DeepEqual(res.Waits, waits) {
		t.Fatalf("%s, waiting on %v:\n%s\nwant %v:\n%s", when, res.WaitingOn, waitsJSON(res.Waits), on, waitsJSON(waits))
	}
}

// TestWaitsBesideAFanOut: beside a fan-out of activities and children,
// Waits lists the first MaxWaits waits that are not activity calls, in
// the order they were scheduled, however they are answered; and what a
// turn reports of them costs no more beside 20,000 open calls than
// beside 200 (the allocations of a turn that takes one answer, counted).
// Not parallel: it counts the allocations of the whole process.
func TestWaitsBesideAFanOut(t *testing.T) {
	var cost [2]allocation
	for i, n := range []int{200, 20000} {
		code := func(_ *fakeGuest, j abi.Job) []abi.Command {
			if j.Kind != abi.JobStart {
				return nil
			}
			cmds := []abi.Command{wait("Approve")}
			for i := range n {
				cmds = append(cmds, activity("Echo", "1"), abi.Command{Kind: abi.CommandStartChild, Name: "Ship", InstanceID: fmt.Sprint("ship-", i)})
			}
			return cmds
		}
		x := newExecution(newGuest(code))
		first, err := x.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
		if err != nil || first.Err != nil {
			t.Fatal(err, first.Err)
		}
		history := slices.Grow(first.NewEvents, 1000)
		// Event 2 waits for Approve; then activity 3, child 4, activity
		// 5, ...: children answered from the back leave the first
		// MaxWaits waits as they were, and answered from the front move
		// them on.
		child := func(k int) int64 { return int64(4 + 2*k) }
		answer := func(ev Event) *TurnResult {
			res, err := x.Turn(TurnInput{History: history, Now: at(1), Messages: []Event{ev}})
			if err != nil || res.Err != nil {
				t.Fatal(err, res.Err)
			}
			history = append(history, res.NewEvents...)
			return res
		}
		childDone := func(k int) Event {
			return Event{Kind: SubOrchestrationCompleted, ScheduleID: child(k), Result: []byte(`1`)}
		}
		answer(childDone(n - 1))
		answer(childDone(0))
		answer(childDone(2))
		res := answer(activityDone(3, `1`))
		want := []Wait{{Kind: WaitEvent, ScheduleID: 2, Name: "Approve", Since: at(0)}}
		for k := 1; len(want) < MaxWaits; k++ {
			if k != 2 {
				want = append(want, Wait{Kind: WaitChild, ScheduleID: child(k), Name: "Ship", ID: fmt.Sprint("ship-", k), Since: at(0)})
			}
		}
		wantWaiting(t, fmt.Sprintf("beside %d calls and children", n), res, []WaitKind{WaitActivity, WaitEvent, WaitChild}, want)

		next := 1 // the activity answered next, 1 after the first
		cost[i] = allocated(50, func() {
			answer(activityDone(int64(3+2*next), `1`))
			next++
		})
	}
	small, big := cost[0], cost[1]
	t.Logf("a turn beside 200 open calls and children: %d allocations, %d bytes; beside 20,000: %d, %d", small.allocs, small.bytes, big.allocs, big.bytes)
	if big.allocs > small.allocs || big.bytes > small.bytes+small.bytes/4 {
		t.Errorf("a turn beside 20,000 open calls and children allocates %d times, %d bytes; beside 200, %d times, %d bytes: it grows with the fan-out", big.allocs, big.bytes, small.allocs, small.bytes)
	}
}

// allocation is what runs of a function allocated, each on average.
type allocation struct{ allocs, bytes uint64 }

// allocated runs f runs times, once before to warm it, and returns what
// each allocated on average.
func allocated(runs int, f func()) allocation {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return allocation{(after.Mallocs - before.Mallocs) / uint64(runs), (after.TotalAlloc - before.TotalAlloc) / uint64(runs)}
}

func waitsJSON(ws []Wait) string {
	b, _ := json.MarshalIndent(ws, "", " ")
	return string(b)
}
