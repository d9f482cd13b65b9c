package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// dialect is PostgreSQL's SQL for the statements written once
// (store/internal/sqlstore): numbered placeholders, rows locked by the
// transaction that changes them, a message's kind in a column of its own.
var dialect = &sqlstore.Dialect{
	Name:          "postgres",
	Numbered:      true,
	NoRows:        func(err error) bool { return errors.Is(err, pgx.ErrNoRows) },
	Lock:          " FOR UPDATE",
	SkipLocked:    " FOR UPDATE SKIP LOCKED",
	MessageKind:   "kind",
	InsertMessage: `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at) SELECT id, $1, $2, $3, $4 FROM instances WHERE id = $5`,
	// The literal 1 (sqlstore.VisibleToStart) matches the partial index
	// messages_start.
	InsertStart: `
		INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at, fair_rank, parent_id)
		SELECT id, $1, $2, 1, $3, greatest(
			(SELECT fair_rank FROM messages WHERE visible_at = 1 ORDER BY fair_rank, id LIMIT 1),
			(SELECT max(fair_rank) + 1 FROM messages WHERE parent_id = $5::text), 0), $5::text
		FROM instances WHERE id = $4`,
	InsertInstance: insertInstance("$5", "", ""),
	FinishedAt:     "finished_at",
	Seq:            "seq",
	NextModuleSeq:  "nextval('module_seq')",
	EndLock:        `, lock_token = NULL, lock_owner = NULL, locked_until = 0`,
	Unlock:         `lock_token = NULL, lock_owner = NULL, locked_until = 0, attempt = 0`,
	NotHeld: func(now int64, anyLease bool) (string, []any, error) {
		if anyLease {
			return `lock_token IS NULL`, nil, nil
		}
		return `locked_until <= ?`, []any{now}, nil
	},
	Repoint: `
		INSERT INTO orchestration_modules (name, hash)
		SELECT $1, hash FROM modules WHERE orchestrations::jsonb ? $1 ORDER BY seq DESC LIMIT 1
		ON CONFLICT (name) DO NOTHING`,
}

// insertInstance is the INSERT of sqlstore.Dialect.InsertInstance, with
// updated as the update's time (the creation's, $5, but for a row written
// as its first turn leaves it), which sets too the columns columns (each
// after a comma) to values, from $9 on.
func insertInstance(updated, columns, values string) string {
	return `
		INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at, parent_id, parent_schedule_id` + columns + `)
		SELECT $1, $2, hash, 1, $3, $4, $5, ` + updated + `, $6, $7` + values + ` FROM modules WHERE hash = $8
		ON CONFLICT (id) DO NOTHING`
}

// sqlDB is a pool or a transaction as the statements written once run
// on it.
type sqlDB struct{ q db }

func (d sqlDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := d.q.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

// Send queues the statement in a write transaction (pipeTx.Send), and
// runs it at once elsewhere.
func (d sqlDB) Send(ctx context.Context, query string, args ...any) error {
	if tx, ok := d.q.(*pipeTx); ok {
		return tx.Send(query, args...)
	}
	_, err := d.q.Exec(ctx, query, args...)
	return err
}

func (d sqlDB) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.q.QueryRow(ctx, query, args...)
}

func (d sqlDB) Query(ctx context.Context, query string, args ...any) (sqlstore.QueryRows, error) {
	rows, err := d.q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// shared returns the operations written once, on this store's reads and
// writes.
func (s *Store) shared() sqlStore {
	writer := func(write func(ctx context.Context, fn func(tx *pipeTx) error) error) sqlstore.WriteFunc {
		return func(ctx context.Context, fn func(ctx context.Context, tx sqlstore.Tx) error) error {
			return write(ctx, func(tx *pipeTx) error { return fn(ctx, newWriteTx(tx).Tx) })
		}
	}
	return sqlstore.New(dialect, sqlstore.Access{
		Read: func(ctx context.Context, fn func(q sqlstore.DB) error) error {
			return s.read(ctx, func(q db) error { return fn(sqlDB{q}) })
		},
		Write: func(ctx context.Context, fn func(ctx context.Context, tx sqlstore.Tx) error) error {
			err := writer(s.write)(ctx, fn)
			if err == nil {
				// A start, a message, or an operation's change: any host's
				// turn, perhaps (watch.go).
				s.announce(announceTurns)
			}
			return err
		},
		WriteUnsynced: writer(s.writeUnsynced),
	})
}
