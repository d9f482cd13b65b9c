package host

import (
	"context"
	"errors"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

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
