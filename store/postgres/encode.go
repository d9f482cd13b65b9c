package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/durabox/durabox/engine"
)

// db is what reads and writes run on: the pool or a transaction.
type db interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// read runs fn on the pool, again while it fails transiently (reads
// change nothing).
func (s *Store) read(ctx context.Context, fn func(q db) error) error {
	if s.closed.Load() {
		return errClosed
	}
	return s.retry(ctx, func() error { return fn(s.pool) })
}

// Times are stored as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// A message's visible_at says when it is visible and, for those visible at
// once, which comes first (see nextInstances): the values of store/sqlite.
const (
	// visibleNow marks a message for an instance that has begun, visible at
	// once.
	visibleNow = 0
	// visibleToStart marks the start of a new instance, visible at once,
	// and served after the work of instances that have begun.
	visibleToStart = 1
	// firstDue is the earliest visible_at of a timer.
	firstDue = 2
)

// dueAt is the visible_at of a timer due at t: at least firstDue.
func dueAt(t time.Time) int64 { return max(nanos(t), firstDue) }

func encodeFailure(f *engine.Failure) *string {
	if f == nil {
		return nil
	}
	b, _ := json.Marshal(f)
	s := string(b)
	return &s
}

func decodeFailure(s *string) (*engine.Failure, error) {
	if s == nil {
		return nil, nil
	}
	f := &engine.Failure{}
	return f, json.Unmarshal([]byte(*s), f)
}

// nullIfEmpty keeps absent JSON as NULL rather than empty bytes.
func nullIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}
