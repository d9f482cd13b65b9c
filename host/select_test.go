package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/durabox/durabox/engine"
)

// The SDK's Select over futures that are more than one operation's:
// persistent waits whose events are already waiting.

// TestSelectOverTwoPersistentWaitsWhoseEventsWait: both events are in the
// mailbox before the waits exist. The first wait in the list wins; the
// other's wait is cancelled, and its event stays in the mailbox for a
// later wait.
func TestSelectOverTwoPersistentWaitsWhoseEventsWait(t *testing.T) {
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
