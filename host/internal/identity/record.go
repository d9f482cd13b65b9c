package identity

import (
	"context"
	"time"

	"github.com/durabox/durabox/store"
)

// Record is the audit record of the change a request asks for, as the
// server would write it were the change made: the host commits it with
// the change, in the change's own transaction (store.NewInstance.Audit,
// store.Queue.Enqueue's audit), and says so (Written), and the server
// then writes none of its own once it has answered. A change the host
// does not make, or makes without it, leaves Written false: the server
// records it as it answered it.
type Record struct {
	store.AuditRecord
	// Written is set once the record has committed with its change.
	Written bool
}

type recordKey struct{}

// WithRecord returns ctx carrying r.
func WithRecord(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// RecordFrom returns the record ctx carries, or nil.
func RecordFrom(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// For returns the record to commit with a change of target (a start's
// instance id, which the host may have chosen) made at now, the host's
// time; nil when r is nil.
func (r *Record) For(target string, now time.Time) *store.AuditRecord {
	if r == nil {
		return nil
	}
	rec := r.AuditRecord
	rec.Target, rec.Time = target, now
	return &rec
}

// Committed notes that the change r.For gave the record to has committed;
// nothing when r is nil.
func (r *Record) Committed() {
	if r != nil {
		r.Written = true
	}
}
