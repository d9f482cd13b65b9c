package host_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// The walkthroughs of the durable-futures reference, end to end through a
// wasm module and the real host.

func TestSelectWithTimeoutActivityWinsThenMoreWork(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	inst := h.run(t, "SelectThenWork", `null`)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"worked 10ms, then worked 20ms"` {
		t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	want := []string{"OrchestrationStarted(SelectThenWork)", "ActivityScheduled(Work)", "TimerCreated", "ActivityCompleted", "TimerCancelled", "ActivityScheduled(Work)", "ActivityCompleted", "OrchestrationCompleted"}
	events := h.history(t, inst.ID)
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
	if events[4].ScheduleID != 3 {
		t.Errorf("TimerCancelled names event %d, want the timer (3)", events[4].ScheduleID)
	}
}

func TestRepeatedSelectWithStaleTimers(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	inst := h.run(t, "RepeatedSelect", `3`)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"activity won 3 of 3"` {
		t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	events := h.history(t, inst.ID)
	var got []string
	for _, s := range shape(events) {
		got = append(got, strings.TrimSuffix(s, "(Work)"))
	}
	round := []string{"ActivityScheduled", "TimerCreated", "ActivityCompleted", "TimerCancelled"}
	want := append([]string{"OrchestrationStarted(RepeatedSelect)"}, round...)
	want = append(append(append(want, round...), round...), "TimerCreated", "TimerFired", "OrchestrationCompleted")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
	// The only timer that fired is the last one: the stale ones were
	// dropped when they came due.
	if fired := events[len(events)-2]; fired.ScheduleID != events[len(events)-3].ID {
		t.Errorf("TimerFired completes event %d, want the final sleep (%d)", fired.ScheduleID, events[len(events)-3].ID)
	}
}

func TestFanOutFanInWithCompletionsOutOfOrder(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	inst := h.run(t, "FanOut", `4`)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `["worked 600ms","worked 450ms","worked 300ms","worked 150ms"]` {
		t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	events := h.history(t, inst.ID)
	// The completions arrived in an order other than the schedule order.
	var completed []int64
	for _, e := range events {
		if e.Kind == engine.ActivityCompleted {
			completed = append(completed, e.ScheduleID)
		}
	}
	if !reflect.DeepEqual(completed, []int64{5, 4, 3, 2}) {
		t.Fatalf("completions arrived for events %v, want 5, 4, 3, 2 (the shortest work first)", completed)
	}
}
