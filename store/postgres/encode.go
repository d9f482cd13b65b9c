package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
