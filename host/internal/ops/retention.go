package ops

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
	// Batches counts the batches that had ended deleted, with their
	// items.
	Batches int
	// AuditRecords counts the records of the audit log deleted.
	AuditRecords int64
}

// Sweep carries out Host.Sweep (package host says what it does).
func (o *Ops) Sweep(ctx context.Context) (Swept, error) {
	var swept Swept
	if o.opts.Retention == 0 {
		return swept, nil
	}
	guard.MayPanic(guard.PointSweep, "")
	before := o.opts.Clock().Add(-o.opts.Retention)
	var err error
	swept.Instances, err = o.PurgeMatching(ctx, store.InstanceFilter{FinishedBefore: before}, false)
	if err != nil {
		return swept, fmt.Errorf("host: sweep: %w", err)
	}
	if swept.Executions, err = deleteAll(ctx, before, o.st.DeleteExecutions); err != nil {
		return swept, fmt.Errorf("host: sweep: %w", err)
	}
	if swept.Batches, err = deleteAll(ctx, before, o.st.DeleteBatches); err != nil {
		return swept, fmt.Errorf("host: sweep: %w", err)
	}
	if swept.AuditRecords, err = o.st.DeleteAudit(ctx, before); err != nil {
		return swept, fmt.Errorf("host: sweep: %w", err)
	}
	if swept != (Swept{}) {
		o.opts.Logger.Info("retention applied", "retention", o.opts.Retention, "instances", swept.Instances, "executions", swept.Executions,
			"batches", swept.Batches, "auditRecords", swept.AuditRecords)
	}
	return swept, nil
}

// deleteAll calls del, a store's deletion of up to max things older than
// before, purgeBatch at a time until it deletes fewer, and returns how
// many it deleted in all.
func deleteAll(ctx context.Context, before time.Time, del func(ctx context.Context, before time.Time, max int) (int, error)) (int, error) {
	all := 0
	for {
		n, err := del(ctx, before, purgeBatch)
		all += n
		if err != nil || n < purgeBatch {
			return all, err
		}
	}
}

// Sweeps runs Sweep every SweepInterval until ctx is done (host.Run runs
// it): a sweep that fails, or panics, is logged, and the next comes at its
// time.
func (o *Ops) Sweeps(ctx context.Context) {
	if o.opts.Retention == 0 {
		return
	}
	t := time.NewTicker(o.opts.SweepInterval)
	defer t.Stop()
	for {
		o.sweepOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepOnce runs Sweep, and logs why it failed. A panic is logged too: the
// next sweep comes at its time.
func (o *Ops) sweepOnce(ctx context.Context) {
	defer o.opts.Guard.Catch(guard.Sweep, nil)
	if _, err := o.Sweep(ctx); err != nil && ctx.Err() == nil {
		o.opts.Logger.Error("retention not applied; it is tried again", "err", err, "in", o.opts.SweepInterval)
	}
}
