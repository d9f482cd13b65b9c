package host

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// waitsKept is how many waits, beside its activity calls (which the
// store's activity tasks describe), a commit keeps of an instance for GET
// /v1/instances/{id}.
const waitsKept = 100

// waitingOn sets what the commit c records of what its instance waits on
// after the turn: the kinds of waits, and the first waitsKept waits that
// are not activity calls.
func waitingOn(c *store.TurnCommit, waits []engine.Wait) {
	for _, w := range waits {
		if !slices.Contains(c.WaitingOn, w.Kind) {
			c.WaitingOn = append(c.WaitingOn, w.Kind)
		}
		if w.Kind != engine.WaitActivity && len(c.Waits) < waitsKept {
			c.Waits = append(c.Waits, w)
		}
	}
}

// Waits returns what instance id waits on beside its activity calls, as
// its last turn left it (PendingActivities describes the calls).
func (h *Host) Waits(ctx context.Context, id string) ([]engine.Wait, error) {
	waits, err := h.st.Waits(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, api.NotFound(id)
	}
	return waits, err
}

// Now returns the host's time (Options.Clock): GET /v1/instances?stalledFor
// counts back from it.
func (h *Host) Now() time.Time { return h.opts.Clock() }
