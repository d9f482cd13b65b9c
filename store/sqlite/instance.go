package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// CreateInstance creates a Pending instance in execution 1, on n.ModuleHash,
// with its OrchestrationStarted message, atomically. It returns an error
// wrapping store.ErrInstanceExists if the id is taken, or store.ErrNotFound
// if the module is not deployed.
func (s *Store) CreateInstance(ctx context.Context, n store.NewInstance) error {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return insertInstance(ctx, tx, n, visibleToStart, nil, nil)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	return nil
}

// insertInstance creates a Pending instance in execution 1 with its
// OrchestrationStarted message, visible at visible; a child when parent is
// not nil, which reports its end to the parent's event parentSchedule
// unless that is nil. It returns an error wrapping store.ErrInstanceExists
// if the id is taken, or store.ErrNotFound if the module is not deployed.
func insertInstance(ctx context.Context, tx *sql.Tx, n store.NewInstance, visible int64, parent, parentSchedule any) error {
	res, err := tx.ExecContext(ctx, `
		INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at, parent_id, parent_schedule_id)
		SELECT ?, ?, hash, 1, ?, ?, ?, ?, ?, ? FROM modules WHERE hash = ?
		ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Name, string(engine.StatusPending), nullIfEmpty(n.Input), nanos(n.Now), nanos(n.Now), parent, parentSchedule, n.ModuleHash)
	if err != nil {
		return err
	}
	if inserted, err := res.RowsAffected(); err != nil || inserted == 0 {
		return errors.Join(err, whyNotInserted(ctx, tx, n))
	}
	_, err = enqueue(ctx, tx, n.ID, engine.Event{Kind: engine.OrchestrationStarted, Name: n.Name, InstanceID: n.ID, Input: n.Input}, visible)
	return err
}

// whyNotInserted says why insertInstance inserted nothing.
func whyNotInserted(ctx context.Context, tx *sql.Tx, n store.NewInstance) error {
	var taken bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM instances WHERE id = ?)`, n.ID).Scan(&taken); err != nil {
		return err
	}
	if taken {
		return store.ErrInstanceExists
	}
	return fmt.Errorf("module %s %w", n.ModuleHash, store.ErrNotFound)
}

// instanceColumns are the columns scanInstance reads.
const instanceColumns = `id, name, module_hash, execution_id, status, input, result, failure, custom_status, created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

// scanInstance scans instanceColumns, and then the columns that follow
// into extra.
func scanInstance(row scanner, extra ...any) (store.Instance, error) {
	var i store.Instance
	var status string
	var input, result []byte
	var failure sql.NullString
	var created, updated int64
	dest := append([]any{&i.ID, &i.Name, &i.ModuleHash, &i.ExecutionID, &status, &input, &result, &failure, &i.CustomStatus, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return i, err
	}
	i.Status, i.Input, i.Result = engine.Status(status), input, result
	i.CreatedAt, i.UpdatedAt = fromNanos(created), fromNanos(updated)
	var err error
	if i.Failure, err = decodeFailure(failure); err != nil {
		return i, fmt.Errorf("decode failure: %w", err)
	}
	return i, nil
}

// GetInstance returns an instance, or an error wrapping store.ErrNotFound.
func (s *Store) GetInstance(ctx context.Context, id string) (store.Instance, error) {
	return getInstance(ctx, s.readers, id)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getInstance(ctx context.Context, q querier, id string) (store.Instance, error) {
	inst, err := scanInstance(q.QueryRowContext(ctx, `SELECT `+instanceColumns+` FROM instances WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return inst, fmt.Errorf("sqlite: instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return inst, fmt.Errorf("sqlite: get instance %q: %w", id, err)
	}
	return inst, nil
}

// ListInstances returns every instance, newest first.
func (s *Store) ListInstances(ctx context.Context) ([]store.Instance, error) {
	rows, err := s.readers.QueryContext(ctx, `SELECT `+instanceColumns+` FROM instances ORDER BY created_at DESC, rowid DESC`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list instances: %w", err)
	}
	defer rows.Close()
	var out []store.Instance
	for rows.Next() {
		inst, err := scanInstance(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list instances: %w", err)
		}
		out = append(out, inst)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list instances: %w", err)
	}
	return out, nil
}

// History returns the history of one execution of an instance (0 means the
// current one), in order, or an error wrapping store.ErrNotFound if the
// instance does not exist. An execution that never ran has no events.
func (s *Store) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var current int64
	err := s.readers.QueryRowContext(ctx, `SELECT execution_id FROM instances WHERE id = ?`, id).Scan(&current)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	if execution == 0 {
		execution = current
	}
	return history(ctx, s.readers, id, execution)
}

// history reads the events of one execution, in order.
func history(ctx context.Context, q querier, id string, execution int64) ([]engine.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT event_id, payload FROM history WHERE instance_id = ? AND execution_id = ? ORDER BY event_id`, id, execution)
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	defer rows.Close()
	var out []engine.Event
	for rows.Next() {
		var eventID int64
		var payload []byte
		if err := rows.Scan(&eventID, &payload); err != nil {
			return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
		}
		var ev engine.Event
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("sqlite: history of %q: decode event %d: %w", id, eventID, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	return out, nil
}

// Enqueue adds a message for an instance, visible at once, or returns an
// error wrapping store.ErrNotFound if the instance does not exist.
func (s *Store) Enqueue(ctx context.Context, instanceID string, ev engine.Event) error {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		ok, err = enqueue(ctx, tx, instanceID, ev, visibleNow)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: enqueue for %q: %w", instanceID, err)
	}
	if !ok {
		return fmt.Errorf("sqlite: instance %q %w", instanceID, store.ErrNotFound)
	}
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// enqueue adds a message for an instance, visible from visibleAt (Unix
// nanoseconds), and reports whether the instance exists; if it does not,
// the message is dropped.
func enqueue(ctx context.Context, db execer, instanceID string, ev engine.Event, visibleAt int64) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("encode %s message: %w", ev.Kind, err)
	}
	res, err := db.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at) SELECT id, ?, ? FROM instances WHERE id = ?`, payload, visibleAt, instanceID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
