package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store/internal/sqlstore"
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

// Times and message visibility are those of both SQL stores (see
// sqlstore.Nanos and sqlstore.VisibleNow).
var (
	nanos     = sqlstore.Nanos
	fromNanos = sqlstore.FromNanos
	dueAt     = sqlstore.DueAt
)

const (
	visibleNow     = sqlstore.VisibleNow
	visibleToStart = sqlstore.VisibleToStart
	firstDue       = sqlstore.FirstDue
)

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
