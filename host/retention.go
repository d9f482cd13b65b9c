package host

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/store"
)

// Swept is what one Sweep deleted.
type Swept struct {
	// Instances counts the finished instances purged.
	Instances int
	// Executions counts the histories of executions that continued as new
	// deleted.
	Executions int
}

// Sweep applies Options.Retention once, at the host's clock: it purges the
// instances that finished more than Retention ago and deletes the history
// of the executions that continued as new more than Retention ago (their
// instances go on). Run calls it every SweepInterval; with no Retention it
// does nothing. It deletes a batch at a time, so it may return an error
// after it deleted some.
func (h *Host) Sweep(ctx context.Context) (Swept, error) {
	var swept Swept
	if h.opts.Retention == 0 {
		return swept, nil
	}
	guard.MayPanic(guard.PointSweep, "")
	before := h.opts.Clock().Add(-h.opts.Retention)
	var err error
	swept.Instances, err = h.PurgeMatching(ctx, store.InstanceFilter{FinishedBefore: before}, false)
	if err != nil {
		return swept, fmt.Errorf("host: sweep: %w", err)
	}
	for {
		n, err := h.st.DeleteExecutions(ctx, before, purgeBatch)
		swept.Executions += n
		if err != nil {
			return swept, fmt.Errorf("host: sweep: %w", err)
		}
		if n < purgeBatch {
			break
		}
	}
	if swept != (Swept{}) {
		h.opts.Logger.Info("retention applied", "retention", h.opts.Retention, "instances", swept.Instances, "executions", swept.Executions)
	}
	return swept, nil
}

// sweep runs Sweep every SweepInterval until ctx is done.
func (h *Host) sweep(ctx context.Context) {
	if h.opts.Retention == 0 {
		return
	}
	t := time.NewTicker(h.opts.SweepInterval)
	defer t.Stop()
	for {
		h.sweepOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepOnce runs Sweep, and logs why it failed. A panic is logged too: the
// next sweep comes at its time.
func (h *Host) sweepOnce(ctx context.Context) {
	defer h.guard.Catch(guard.Sweep, nil)
	if _, err := h.Sweep(ctx); err != nil && ctx.Err() == nil {
		h.opts.Logger.Error("retention not applied; it is tried again", "err", err, "in", h.opts.SweepInterval)
	}
}
