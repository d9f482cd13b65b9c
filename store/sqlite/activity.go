package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

func (s *Store) LockNextActivity(ctx context.Context, now time.Time, lease time.Duration) (*store.ActivityWork, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock next activity: %w", err)
	}
	defer tx.Rollback()
	w := &store.ActivityWork{LockToken: newToken()}
	var input []byte
	err = tx.QueryRowContext(ctx, `
		UPDATE activity_tasks SET lock_token = ?, locked_until = ?, attempt = attempt + 1
		WHERE id = (SELECT id FROM activity_tasks WHERE locked_until <= ? ORDER BY id LIMIT 1)
		RETURNING id, instance_id, execution_id, module_hash, schedule_id, name, input, attempt`,
		w.LockToken, nanos(now.Add(lease)), nanos(now)).
		Scan(&w.ID, &w.InstanceID, &w.ExecutionID, &w.ModuleHash, &w.Task.ScheduleID, &w.Task.Name, &input, &w.Attempt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock next activity: %w", err)
	}
	w.Task.Input = input
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: lock activity %d: %w", w.ID, err)
	}
	return w, nil
}

func (s *Store) CompleteActivity(ctx context.Context, w *store.ActivityWork, result engine.Event) error {
	payload, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE id = ? AND lock_token = ?`, w.ID, w.LockToken)
	if err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: complete activity %d (%q of %q): %w: it was handed to another worker or completed", w.ID, w.Task.Name, w.InstanceID, store.ErrLeaseLost)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at) VALUES (?, ?, 0)`, w.InstanceID, payload); err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	return nil
}
