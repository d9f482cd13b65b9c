package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// newDialect is SQLite's SQL for the statements written once
// (store/internal/sqlstore): ? placeholders, no row locks (a write
// transaction holds the whole file, and the file has one host), a
// message's kind read from its JSON. Each store has its own: a new
// instance's first delivery is counted in advance by the store's run
// (locks.go), and every change to the messages is counted for the
// earliest visible message the store remembers (first.go).
func (s *Store) newDialect() *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Name:          "sqlite",
		NoRows:        func(err error) bool { return errors.Is(err, sql.ErrNoRows) },
		MessageKind:   "json_extract(payload, '$.kind')",
		InsertMessage: `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at) SELECT id, ?2, ?3, ?4 FROM instances WHERE id = ?5`,
		// The literal 1 is sqlstore.VisibleToStart, which the partial index
		// messages_start covers; INDEXED BY, because without statistics
		// SQLite's planner read messages_visible and sorted every start
		// waiting, for each start (TestBacklogCostsPerItem).
		InsertStart: `
			INSERT INTO messages (instance_id, payload, visible_at, enqueued_at, fair_rank, parent_id)
			SELECT id, ?2, 1, ?3, max(
				coalesce((SELECT fair_rank FROM messages INDEXED BY messages_start WHERE visible_at = 1 ORDER BY fair_rank, id LIMIT 1), 0),
				coalesce((SELECT max(fair_rank) + 1 FROM messages WHERE parent_id = ?5), 0)), ?5
			FROM instances WHERE id = ?4`,
		InsertInstance: `
			INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at, parent_id, parent_schedule_id, attempt, counted_run)
			SELECT ?1, ?2, hash, 1, ?3, ?4, ?5, ?5, ?6, ?7, 1, ` + strconv.FormatInt(s.run, 10) + ` FROM modules WHERE hash = ?8
			ON CONFLICT (id) DO NOTHING`,
		Seq:           "rowid",
		NextModuleSeq: "(SELECT coalesce(max(seq), 0) + 1 FROM modules)",
		Unlock:        `attempt = 1, counted_run = ` + strconv.FormatInt(s.run, 10),
		NotHeld: func(now int64, anyLease bool) (string, []any, error) {
			held, err := idList(s.leases.held(now, anyLease))
			return `id NOT IN (SELECT value FROM json_each(?))`, []any{held}, err
		},
		Repoint: `
			INSERT INTO orchestration_modules (name, hash)
			SELECT ?1, m.hash FROM modules m, json_each(m.orchestrations) j WHERE j.value = ?1 ORDER BY m.seq DESC LIMIT 1
			ON CONFLICT (name) DO NOTHING`,
		// q is the readers: history reads a long history on two of them.
		ReadHistory: func(ctx context.Context, _ sqlstore.DB, id string, execution int64) ([]engine.Event, error) {
			return history(ctx, s.readers, id, execution)
		},
		MessagesChanged: s.first.changed,
	}
}

// sqlStore is the operations written once (sqlstore.Store), which Store
// embeds: its modules, instance reads, enqueues and purges.
type sqlStore = sqlstore.Store

// shared returns the operations written once, on this store's readers
// and its writer.
func (s *Store) shared() sqlStore {
	writer := func(write func(ctx context.Context, fn writeFunc) error) sqlstore.WriteFunc {
		return func(ctx context.Context, fn func(ctx context.Context, tx sqlstore.Tx) error) error {
			return write(ctx, func(ctx context.Context, tx txConn) error { return fn(ctx, s.writeTx(tx).Tx) })
		}
	}
	return sqlstore.New(s.dialect, sqlstore.Access{
		Read:          func(ctx context.Context, fn func(q sqlstore.DB) error) error { return fn(sqlDB{s.readers}) },
		Write:         writer(s.write),
		WriteUnsynced: writer(s.writeUnsynced),
	})
}

// sqlDB is a connection, in a transaction or not, or the readers, as the
// statements written once run on it.
type sqlDB struct{ q txConn }

func (d sqlDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := d.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Send runs a statement at once: SQLite's statements make no round trips.
func (d sqlDB) Send(ctx context.Context, query string, args ...any) error {
	_, err := d.q.ExecContext(ctx, query, args...)
	return err
}

func (d sqlDB) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.q.QueryRowContext(ctx, query, args...)
}

func (d sqlDB) Query(ctx context.Context, query string, args ...any) (sqlstore.QueryRows, error) {
	rows, err := d.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows is database/sql's rows as sqlstore reads them. Their Close
// reports nothing Err has not: the rows are read to their end, or given
// up on after an error that is returned.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }
