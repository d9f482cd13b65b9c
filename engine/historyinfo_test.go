package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/durabox/durabox/abi"
)

// historyInfo is what an activation says of the history.
type historyInfo struct {
	length, size uint64
	suggested    bool
}

func infos(activations []abi.Activation) []historyInfo {
	out := make([]historyInfo, len(activations))
	for i, a := range activations {
		out[i] = historyInfo{a.HistoryLength, a.HistorySize, a.ContinueAsNewSuggested}
	}
	return out
}

// liveRetry runs the retry walkthrough on one Execution and guest, with
// the caller's history warning at warning, and returns the history it
// recorded and the guest, which kept every activation.
func liveRetry(t *testing.T, warning int64) ([]Event, *fakeGuest) {
	t.Helper()
	g := newGuest(retry)
	x := newExecution(g)
	var history []Event
	for _, s := range retrySteps {
		res, err := x.Turn(TurnInput{History: history, Messages: s.messages, Now: s.now, HistoryWarning: warning})
		if err != nil || res.Err != nil {
			t.Fatal(err, res.Err)
		}
		history = append(history, res.NewEvents...)
	}
	return history, g
}

// TestActivationsTellHistory runs the retry walkthrough live, with the
// history warning at 4 events, and replays its history on a fresh guest
// with the caller's warning at 1,000 and at 0: each activation says how
// many events the guest has applied and the bytes of their payloads, and
// whether the history is past the warning recorded at the start, exactly
// as its first run did.
func TestActivationsTellHistory(t *testing.T) {
	t.Parallel()
	history, g := liveRetry(t, 4)
	if got := history[0].HistoryWarning; got != 4 {
		t.Fatalf("the OrchestrationStarted records the warning %d, want 4", got)
	}
	// Started (Name "Test", InstanceID "i1", Input "{}": 8 bytes), then
	// the failure (6, "flaky"), the timer (4) and the result (7,
	// "\"success\""); each step's commands count once the next step
	// applies: ActivityScheduled "FlakyTask" with 1 or 2 (10 bytes each).
	want := []historyInfo{{1, 8, false}, {3, 8 + 10 + 5, false}, {5, 23 + 0 + 0, true}, {7, 23 + 10 + 9, true}}
	if got := infos(g.activations); !reflect.DeepEqual(got, want) {
		t.Fatalf("live activations say %+v, want %+v", got, want)
	}
	for _, warning := range []int64{1000, 0} {
		t.Run(fmt.Sprintf("replayed with the warning at %d", warning), func(t *testing.T) {
			g := newGuest(retry)
			res, err := newExecution(g).Turn(TurnInput{History: history, Now: at(9), HistoryWarning: warning})
			if err != nil || res.Err != nil || len(res.NewEvents) != 0 {
				t.Fatal(err, res.Err, res.NewEvents)
			}
			if got := infos(g.activations); !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed activations say %+v, want %+v", got, want)
			}
		})
	}
}

// TestNoWarningNeverSuggests: an execution started without a history
// warning (by a host older than it, or one that sets none) is never told
// to continue as new, however long it runs.
func TestNoWarningNeverSuggests(t *testing.T) {
	t.Parallel()
	history, g := liveRetry(t, 0)
	if history[0].HistoryWarning != 0 {
		t.Fatalf("the OrchestrationStarted records the warning %d, want none", history[0].HistoryWarning)
	}
	for i, a := range g.activations {
		if a.ContinueAsNewSuggested {
			t.Fatalf("activation %d (history length %d) suggests continuing as new", i, a.HistoryLength)
		}
	}
}
