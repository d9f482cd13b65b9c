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

func (s *Store) CreateInstance(ctx context.Context, n store.NewInstance) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `
		INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at)
		VALUES (?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Name, n.ModuleHash, string(engine.StatusPending), nullIfEmpty(n.Input), nanos(n.Now), nanos(n.Now))
	if err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	var inserted int
	if err := tx.QueryRowContext(ctx, `SELECT changes()`).Scan(&inserted); err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	if inserted == 0 {
		return fmt.Errorf("sqlite: instance %q: %w", n.ID, store.ErrInstanceExists)
	}
	if _, err := enqueue(ctx, tx, n.ID, engine.Event{Kind: engine.OrchestrationStarted, Name: n.Name, InstanceID: n.ID, Input: n.Input}); err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	return nil
}

const instanceColumns = `id, name, module_hash, execution_id, status, input, result, failure, custom_status, created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanInstance(row scanner) (store.Instance, error) {
	var i store.Instance
	var status string
	var input, result []byte
	var failure sql.NullString
	var created, updated int64
	if err := row.Scan(&i.ID, &i.Name, &i.ModuleHash, &i.ExecutionID, &status, &input, &result, &failure, &i.CustomStatus, &created, &updated); err != nil {
		return i, err
	}
	i.Status, i.Input, i.Result = engine.Status(status), input, result
	i.CreatedAt, i.UpdatedAt = fromNanos(created), fromNanos(updated)
	var err error
	i.Failure, err = decodeFailure(failure)
	return i, err
}

func (s *Store) GetInstance(ctx context.Context, id string) (store.Instance, error) {
	return getInstance(ctx, s.db, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
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

func (s *Store) ListInstances(ctx context.Context) ([]store.Instance, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+instanceColumns+` FROM instances ORDER BY created_at DESC, rowid DESC`)
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
	return out, rows.Err()
}

func (s *Store) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	inst, err := s.GetInstance(ctx, id)
	if err != nil {
		return nil, err
	}
	if execution == 0 {
		execution = inst.ExecutionID
	}
	return history(ctx, s.db, id, execution)
}

func history(ctx context.Context, q querier, id string, execution int64) ([]engine.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT payload FROM history WHERE instance_id = ? AND execution_id = ? ORDER BY event_id`, id, execution)
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	defer rows.Close()
	var out []engine.Event
	for rows.Next() {
		var payload []byte
		var ev engine.Event
		if err := rows.Scan(&payload); err != nil {
			return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
		}
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("sqlite: history of %q: decode event: %w", id, err)
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// enqueue adds a message for an existing instance, visible at once, and
// reports whether the instance exists.
func enqueue(ctx context.Context, db execer, instanceID string, ev engine.Event) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	res, err := db.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at) SELECT id, ?, 0 FROM instances WHERE id = ?`, payload, instanceID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *Store) Enqueue(ctx context.Context, instanceID string, ev engine.Event) error {
	ok, err := enqueue(ctx, s.db, instanceID, ev)
	if err != nil {
		return fmt.Errorf("sqlite: enqueue for %q: %w", instanceID, err)
	}
	if !ok {
		return fmt.Errorf("sqlite: instance %q %w", instanceID, store.ErrNotFound)
	}
	return nil
}
