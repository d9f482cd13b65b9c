package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
)

// The test plan of the external-event reference (positional events and the
// select-loser fix; persistent events), end to end through a wasm module and
// the real host. A test raises events at the moment the plan says by
// watching the instance's history, as a client would.

func eventsHost(t *testing.T) *testHost {
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/events")
	return h
}

// until polls the instance's history until cond holds, for 30s at most.
// An instance that does not exist yet has an empty history.
func (h *testHost) until(t *testing.T, id, what string, cond func([]engine.Event) bool) []engine.Event {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		events, err := h.History(context.Background(), id)
		if err != nil && !errors.Is(err, api.ErrNotFound) {
			t.Fatal(err)
		}
		if cond(events) {
			return events
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("instance %s never reached: %s; history %v", id, what, shape(h.history(t, id)))
		}
	}
}

// has returns a condition: at least n events of kind.
func has(n int, kind engine.EventKind) func([]engine.Event) bool {
	return func(events []engine.Event) bool { return count(events, kind) >= n }
}

func count(events []engine.Event, kind engine.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func (h *testHost) raise(t *testing.T, id, data string, persistent bool) {
	t.Helper()
	if err := h.Raise(context.Background(), id, "X", json.RawMessage(data), persistent); err != nil {
		t.Fatal(err)
	}
}

// finish waits for the instance and checks its result.
func (h *testHost) finish(t *testing.T, id, want string) []engine.Event {
	t.Helper()
	inst := h.wait(t, id)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != want {
		t.Fatalf("status %s result %s failure %+v; want result %s\nhistory %v", inst.Status, inst.Result, inst.Failure, want, shape(h.history(t, id)))
	}
	return h.history(t, id)
}

func TestExternalEventWaitInSelectShouldNotStealFutureEvent(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "RaceSleepWait", `"0s"`)
	h.until(t, id, "the second wait", has(2, engine.ExternalSubscribed))
	h.raise(t, id, `"data"`, false)
	h.finish(t, id, `"data"`)
}

func TestCancelledSubscriptionDropsInterveningEvent(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "RaceSleepWait", `"1s"`)
	h.until(t, id, "the cancelled wait and the sleep", func(e []engine.Event) bool {
		return count(e, engine.ExternalSubscribedCancelled) == 1 && count(e, engine.TimerCreated) == 2
	})
	h.raise(t, id, `"stale"`, false)
	h.until(t, id, "the second wait", has(2, engine.ExternalSubscribed))
	h.raise(t, id, `"fresh"`, false)
	events := h.finish(t, id, `"fresh"`)
	if n := count(events, engine.ExternalEvent); n != 1 {
		t.Fatalf("%d ExternalEvents in history, want only the fresh one", n)
	}
}

func TestPositionalMatchingPreservedWithoutCancellation(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "Wait", `{"times": 2}`)
	h.until(t, id, "the first wait", has(1, engine.ExternalSubscribed))
	h.raise(t, id, `"first"`, false)
	h.until(t, id, "the second wait", has(2, engine.ExternalSubscribed))
	h.raise(t, id, `"second"`, false)
	h.finish(t, id, `["first","second"]`)
}

// TestRaisedEventTakesTheOldestWait opens two waits for X at once, as two
// futures and as two branches, and raises X twice: the first event goes to
// the wait opened first, the second to the other, which the result shows
// in the order the waits were opened.
func TestRaisedEventTakesTheOldestWait(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	for _, how := range []string{"futures", "branches"} {
		t.Run(how, func(t *testing.T) {
			id := h.start(t, "TwoWaits", `"`+how+`"`)
			h.until(t, id, "both waits", has(2, engine.ExternalSubscribed))
			h.raise(t, id, `"first"`, false)
			h.raise(t, id, `"second"`, false)
			events := h.finish(t, id, `["first","second"]`)
			var waits, bound []int64
			for _, ev := range events {
				switch ev.Kind {
				case engine.ExternalSubscribed:
					waits = append(waits, ev.ID)
				case engine.ExternalEvent:
					bound = append(bound, ev.ScheduleID)
				}
			}
			if !reflect.DeepEqual(bound, waits) {
				t.Errorf("the events raised are bound to the waits of events %v, in order; want %v, the oldest wait first\nhistory %v", bound, waits, shape(events))
			}
		})
	}
}

func TestCancelledSubscriptionBreadcrumbReplaysCorrectly(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "RaceSleepWait", `"0s"`)
	h.until(t, id, "the second wait", has(2, engine.ExternalSubscribed))
	h.raise(t, id, `"data"`, false)
	events := h.finish(t, id, `"data"`)
	want := []string{"OrchestrationStarted(RaceSleepWait)", "ExternalSubscribed(X)", "TimerCreated", "TimerFired", "ExternalSubscribedCancelled", "ExternalSubscribed(X)", "ExternalEvent(X)", "OrchestrationCompleted"}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
	if events[4].ScheduleID != 2 || events[6].ScheduleID != 6 {
		t.Fatalf("the breadcrumb cancels event %d, the event goes to %d; want 2 and 6", events[4].ScheduleID, events[6].ScheduleID)
	}
	rep, err := h.Replay(context.Background(), id, api.ReplayRequest{})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
}

func TestPersistentEventBasicDelivery(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "WaitPersistent", `{"times": 1}`)
	h.until(t, id, "the wait", has(1, engine.ExternalSubscribedPersistent))
	h.raise(t, id, `"data"`, true)
	h.finish(t, id, `["data"]`)
}

func TestPersistentEventArrivesBeforeSubscription(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "WaitPersistent", `{"pause": "500ms", "times": 1}`)
	h.until(t, id, "the sleep", has(1, engine.TimerCreated))
	h.raise(t, id, `"early"`, true)
	events := h.finish(t, id, `["early"]`)
	want := []string{"OrchestrationStarted(WaitPersistent)", "TimerCreated", "ExternalEventPersistent(X)", "TimerFired", "ExternalSubscribedPersistent(X)", "OrchestrationCompleted"}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
}

func TestPersistentEventSurvivesSelectCancellation(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "RaceSleepWaitPersistent", `"1s"`)
	h.until(t, id, "the cancelled wait", has(1, engine.ExternalSubscribedCancelled))
	h.raise(t, id, `"kept"`, true)
	h.finish(t, id, `"kept"`)
}

func TestPositionalEventDroppedAfterSelectCancellation(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "RaceSleepWait", `"1s"`)
	h.until(t, id, "the cancelled wait", has(1, engine.ExternalSubscribedCancelled))
	h.raise(t, id, `"lost"`, false)
	events := h.until(t, id, "the second wait", has(2, engine.ExternalSubscribed))
	if n := count(events, engine.ExternalEvent); n != 0 {
		t.Fatalf("the event raised after the cancellation was kept: %v", shape(events))
	}
	// Unlike a persistent event, it is gone: the second wait takes the next.
	h.raise(t, id, `"next"`, false)
	h.finish(t, id, `"next"`)
}

func TestPersistentEventFifoOrdering(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "WaitPersistent", `{"pause": "500ms", "times": 2}`)
	h.until(t, id, "the sleep", has(1, engine.TimerCreated))
	h.raise(t, id, `"first"`, true)
	h.raise(t, id, `"second"`, true)
	h.finish(t, id, `["first","second"]`)
}

func TestPersistentEventSurvivesContinueAsNew(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "ContinueThenWait", `1`)
	h.until(t, id, "the sleep", has(1, engine.TimerCreated))
	h.raise(t, id, `"carried"`, true)
	events := h.finish(t, id, `"carried"`)
	// The new execution subscribes as it starts; the carried event is its
	// next message.
	want := []string{"OrchestrationStarted(ContinueThenWait)", "ExternalSubscribedPersistent(X)", "ExternalEventPersistent(X)", "OrchestrationCompleted"}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("second execution's history %v\nwant %v", got, want)
	}
	if inst := h.wait(t, id); inst.ExecutionID != 2 {
		t.Fatalf("execution %d, want 2", inst.ExecutionID)
	}
	first, err := h.ExecutionHistory(context.Background(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"OrchestrationStarted(ContinueThenWait)", "TimerCreated", "ExternalEventPersistent(X)", "TimerFired", "OrchestrationContinuedAsNew"}
	if got := shape(first); !reflect.DeepEqual(got, want) {
		t.Fatalf("first execution's history %v\nwant %v", got, want)
	}
}

func TestPersistentAndPositionalAreIndependent(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "BothLanes", `null`)
	h.until(t, id, "both waits", func(e []engine.Event) bool {
		return count(e, engine.ExternalSubscribed) == 1 && count(e, engine.ExternalSubscribedPersistent) == 1
	})
	h.raise(t, id, `"persistent"`, true)
	h.raise(t, id, `"positional"`, false)
	h.finish(t, id, `["positional","persistent"]`)
}
