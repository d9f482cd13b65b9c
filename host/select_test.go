package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// The SDK's Select over futures that are more than one operation's: a
// branch's, and persistent waits whose events are already waiting.

// TestSelectOverABranchThatLoses: a branch started with ctx.Go loses a
// Select to a timer. It is left running, as the SDK documents; its future
// resolves when it returns.
func TestSelectOverABranchThatLoses(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/conformance")
	id := h.start(t, "BranchLoses", `null`)
	events := h.until(t, id, "the timer fired", func(events []engine.Event) bool {
		return count(events, engine.TimerFired) == 1 || count(events, engine.OrchestrationFailed) == 1
	})
	if last := events[len(events)-1]; last.Kind == engine.OrchestrationFailed {
		t.Fatalf("the instance failed: %s", last.Failure.Message)
	}
	if err := h.Raise(context.Background(), id, "late", json.RawMessage(`"late news"`), false); err != nil {
		t.Fatal(err)
	}
	events = h.finish(t, id, `"the timer won; then the branch got late news"`)
	// Nothing was cancelled: the timer fired, and the branch's wait took
	// its event.
	want := []string{"OrchestrationStarted(BranchLoses)", "TimerCreated", "ExternalSubscribed(late)", "TimerFired", "ExternalEvent(late)", "OrchestrationCompleted"}
	if got := shape(events); !slices.Equal(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
}

// TestSelectOverTwoPersistentWaitsWhoseEventsWait: both events are in the
// mailbox before the waits exist. The first wait in the list wins; the
// other's wait is cancelled, and its event stays in the mailbox for a
// later wait.
func TestSelectOverTwoPersistentWaitsWhoseEventsWait(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	ctx := context.Background()
	id := h.start(t, "FirstOfTwoMailboxes", `null`)
	h.until(t, id, "the wait for go", has(1, engine.ExternalSubscribed))
	for _, ev := range []struct {
		name, data string
		persistent bool
	}{{"A", `"a"`, true}, {"B", `"b"`, true}, {"go", `null`, false}} {
		if err := h.Raise(ctx, id, ev.name, json.RawMessage(ev.data), ev.persistent); err != nil {
			t.Fatal(err)
		}
	}
	events := h.finish(t, id, `"A won with a; B came later with b"`)
	want := []string{"OrchestrationStarted(FirstOfTwoMailboxes)", "ExternalSubscribed(go)", "ExternalEventPersistent(A)", "ExternalEventPersistent(B)", "ExternalEvent(go)",
		"ExternalSubscribedPersistent(A)", "ExternalSubscribedPersistent(B)", "ExternalSubscribedCancelled", "ExternalSubscribedPersistent(B)", "OrchestrationCompleted"}
	if got := shape(events); !slices.Equal(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
	if cancelled := events[7].ScheduleID; cancelled != 7 {
		t.Errorf("the wait cancelled is event %d, want 7 (the wait for B)", cancelled)
	}
}
