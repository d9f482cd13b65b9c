package host

import (
	"context"
	"slices"
	"time"

	"github.com/durabox/durabox/store"
)

// stepLease is how long RunTurns and RunActivities hold what they take:
// longer than any step they run, which holds it only until it records.
const stepLease = time.Minute

// RunTurns runs, in the calling goroutine, the turns of the instances with
// work due at now, one after another, until none has any, and leaves the
// activity tasks they schedule waiting; it returns how many turns it ran.
// With RunActivities it drives a host one step at a time, in an order its
// caller decides, in place of Run's dispatchers, so that which messages
// share a turn is decided by the caller, not by timing: the conformance
// kit (package guestkit) and tests drive a host so, under a clock
// (Options.Clock) they move themselves. Do not call it while Run runs.
func (h *Host) RunTurns(ctx context.Context, now time.Time) (int, error) {
	ran := 0
	for {
		items, err := h.st.LockNextInstances(ctx, now, stepLease, 1, nil)
		if err != nil || len(items) == 0 {
			return ran, err
		}
		h.turn(ctx, items[0])
		ran++
	}
}

// RunActivities runs, in the calling goroutine, the activity tasks due at
// now, one after another, in the order they were scheduled (reversed: in
// the reverse order), records each outcome, and returns how many it ran.
// The turns those outcomes give are left to RunTurns. Do not call it while
// Run runs.
func (h *Host) RunActivities(ctx context.Context, now time.Time, reversed bool) (int, error) {
	var taken []*store.ActivityWork
	for {
		ws, err := h.st.LockNextActivities(ctx, now, stepLease, 1, nil)
		if err != nil {
			return 0, err
		}
		if len(ws) == 0 {
			break
		}
		taken = append(taken, ws[0])
	}
	if reversed {
		slices.Reverse(taken)
	}
	for _, w := range taken {
		h.runTask(ctx, w, time.Time{}, false)
	}
	return len(taken), nil
}
