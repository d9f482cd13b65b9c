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

func (s *Store) LockNextInstance(ctx context.Context, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock next instance: %w", err)
	}
	defer tx.Rollback()
	item, err := lockNextInstance(ctx, tx, now, lease)
	if err != nil {
		return nil, err
	}
	// Commit even without an item: messages of finished instances may have
	// been dropped on the way.
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: lock next instance: %w", err)
	}
	return item, nil
}

func lockNextInstance(ctx context.Context, tx *sql.Tx, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	for {
		var id, status string
		err := tx.QueryRowContext(ctx, `
			SELECT i.id, i.status FROM messages m JOIN instances i ON i.id = m.instance_id
			WHERE m.visible_at <= ? AND i.locked_until <= ?
			ORDER BY m.id LIMIT 1`, nanos(now), nanos(now)).Scan(&id, &status)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: lock next instance: %w", err)
		}
		if engine.Status(status).IsTerminal() {
			// Nothing can apply to a finished instance: drop what arrived.
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE instance_id = ? AND visible_at <= ?`, id, nanos(now)); err != nil {
				return nil, fmt.Errorf("sqlite: drop messages of finished instance %q: %w", id, err)
			}
			continue
		}
		return lockInstance(ctx, tx, id, now, lease)
	}
}

func lockInstance(ctx context.Context, tx *sql.Tx, id string, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	item := &store.WorkItem{LockToken: newToken()}
	if _, err := tx.ExecContext(ctx, `UPDATE instances SET lock_token = ?, locked_until = ? WHERE id = ?`,
		item.LockToken, nanos(now.Add(lease)), id); err != nil {
		return nil, fmt.Errorf("sqlite: lock instance %q: %w", id, err)
	}
	var err error
	if item.Instance, err = getInstance(ctx, tx, id); err != nil {
		return nil, err
	}
	if item.History, err = history(ctx, tx, id, item.Instance.ExecutionID); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, payload FROM messages WHERE instance_id = ? AND visible_at <= ? ORDER BY id`, id, nanos(now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages of %q: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m store.Message
		var payload []byte
		if err := rows.Scan(&m.ID, &payload); err != nil {
			return nil, fmt.Errorf("sqlite: messages of %q: %w", id, err)
		}
		if err := json.Unmarshal(payload, &m.Event); err != nil {
			return nil, fmt.Errorf("sqlite: message %d of %q: %w", m.ID, id, err)
		}
		item.Messages = append(item.Messages, m)
	}
	return item, rows.Err()
}

func (s *Store) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: commit turn of %q: %w", c.InstanceID, err)
	}
	defer tx.Rollback()
	if err := commitTurn(ctx, tx, c); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit turn of %q: %w", c.InstanceID, err)
	}
	return nil
}

func commitTurn(ctx context.Context, tx *sql.Tx, c store.TurnCommit) error {
	var token, parent sql.NullString
	var parentSchedule sql.NullInt64
	var lastID int64
	var moduleHash, name string
	err := tx.QueryRowContext(ctx, `SELECT lock_token, last_event_id, module_hash, name, parent_id, parent_schedule_id FROM instances WHERE id = ?`, c.InstanceID).
		Scan(&token, &lastID, &moduleHash, &name, &parent, &parentSchedule)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: instance %q %w", c.InstanceID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: commit turn of %q: %w", c.InstanceID, err)
	}
	if !token.Valid || token.String != c.LockToken {
		return fmt.Errorf("sqlite: commit turn of %q: %w: another worker holds the instance", c.InstanceID, store.ErrLeaseLost)
	}
	for i, ev := range c.NewEvents {
		if want := lastID + int64(i) + 1; ev.ID != want {
			return fmt.Errorf("sqlite: commit turn of %q: new event %d has id %d where history continues at %d", c.InstanceID, i, ev.ID, want)
		}
		payload, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: encode event %d: %w", c.InstanceID, ev.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO history (instance_id, execution_id, event_id, payload) VALUES (?, ?, ?, ?)`,
			c.InstanceID, c.ExecutionID, ev.ID, payload); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: event %d: %w", c.InstanceID, ev.ID, err)
		}
	}
	for _, a := range c.Activities {
		if _, err := tx.ExecContext(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input) VALUES (?, ?, ?, ?, ?, ?)`,
			c.InstanceID, c.ExecutionID, moduleHash, a.ScheduleID, a.Name, nullIfEmpty(a.Input)); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: activity %d: %w", c.InstanceID, a.ScheduleID, err)
		}
	}
	for _, t := range c.Timers {
		fireAt := t.FireAt
		payload, _ := json.Marshal(engine.Event{Kind: engine.TimerFired, ScheduleID: t.ScheduleID, FireAt: &fireAt})
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at) VALUES (?, ?, ?)`,
			c.InstanceID, payload, nanos(t.FireAt)); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: timer %d: %w", c.InstanceID, t.ScheduleID, err)
		}
	}
	for _, id := range c.Consumed {
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ? AND instance_id = ?`, id, c.InstanceID); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: consume message %d: %w", c.InstanceID, id, err)
		}
	}
	for _, child := range c.Children {
		if err := startChild(ctx, tx, c.InstanceID, child); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: child %q: %w", c.InstanceID, child.ID, err)
		}
	}
	if c.CustomStatus != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE instances SET custom_status = ? WHERE id = ?`, *c.CustomStatus, c.InstanceID); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: custom status: %w", c.InstanceID, err)
		}
	}
	for _, o := range c.Outgoing {
		if _, err := enqueue(ctx, tx, o.InstanceID, o.Event); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: message for %q: %w", c.InstanceID, o.InstanceID, err)
		}
	}
	if can := c.ContinueAsNew; can != nil {
		return continueAsNew(ctx, tx, c.InstanceID, name, can)
	}
	if c.Status.IsTerminal() && parent.Valid && parentSchedule.Valid {
		report := engine.Event{Kind: engine.SubOrchestrationCompleted, ScheduleID: parentSchedule.Int64, Result: c.Result}
		if c.Status == engine.StatusFailed {
			report = engine.Event{Kind: engine.SubOrchestrationFailed, ScheduleID: parentSchedule.Int64, Failure: c.Failure}
		}
		if _, err := enqueue(ctx, tx, parent.String, report); err != nil {
			return fmt.Errorf("sqlite: commit turn of %q: report to parent %q: %w", c.InstanceID, parent.String, err)
		}
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE instances SET status = ?, result = ?, failure = ?, updated_at = ?, last_event_id = ?, lock_token = NULL, locked_until = 0
		WHERE id = ?`,
		string(c.Status), nullIfEmpty(c.Result), encodeFailure(c.Failure), nanos(time.Now()), lastID+int64(len(c.NewEvents)), c.InstanceID)
	if err != nil {
		return fmt.Errorf("sqlite: commit turn of %q: %w", c.InstanceID, err)
	}
	return nil
}

// startChild creates a child instance, or, when it cannot start, reports
// the failure to its parent at once.
func startChild(ctx context.Context, tx *sql.Tx, parent string, c store.NewChild) error {
	var schedule any
	if !c.Detached {
		schedule = c.ScheduleID
	}
	reason := fmt.Sprintf("no deployed module registers orchestration %q", c.Name)
	if c.ModuleHash != "" {
		now := nanos(time.Now())
		res, err := tx.ExecContext(ctx, `
			INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at, parent_id, parent_schedule_id)
			VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			c.ID, c.Name, c.ModuleHash, string(engine.StatusPending), nullIfEmpty(c.Input), now, now, parent, schedule)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			_, err := enqueue(ctx, tx, c.ID, engine.Event{Kind: engine.OrchestrationStarted, Name: c.Name, InstanceID: c.ID, Input: c.Input})
			return err
		}
		reason = fmt.Sprintf("instance id %q is already taken", c.ID)
	}
	if c.Detached {
		return nil
	}
	_, err := enqueue(ctx, tx, parent, engine.Event{Kind: engine.SubOrchestrationFailed, ScheduleID: c.ScheduleID,
		Failure: &engine.Failure{Message: fmt.Sprintf("child orchestration %q could not start: %s", c.Name, reason)}})
	return err
}

// continueAsNew starts an instance's next execution.
func continueAsNew(ctx context.Context, tx *sql.Tx, id, name string, can *engine.ContinueAsNew) error {
	_, err := tx.ExecContext(ctx, `
		UPDATE instances SET execution_id = execution_id + 1, status = ?, input = ?, result = NULL, failure = NULL,
			updated_at = ?, last_event_id = 0, lock_token = NULL, locked_until = 0
		WHERE id = ?`,
		string(engine.StatusPending), nullIfEmpty(can.Input), nanos(time.Now()), id)
	if err != nil {
		return fmt.Errorf("sqlite: continue %q as new: %w", id, err)
	}
	messages := append([]engine.Event{{Kind: engine.OrchestrationStarted, Name: name, InstanceID: id, Input: can.Input}}, can.Carried...)
	for _, m := range messages {
		if _, err := enqueue(ctx, tx, id, m); err != nil {
			return fmt.Errorf("sqlite: continue %q as new: %w", id, err)
		}
	}
	return nil
}

func (s *Store) AbandonInstance(ctx context.Context, id, lockToken string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE instances SET lock_token = NULL, locked_until = 0 WHERE id = ? AND lock_token = ?`, id, lockToken); err != nil {
		return fmt.Errorf("sqlite: abandon instance %q: %w", id, err)
	}
	return nil
}

func (s *Store) NextVisibleAt(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT min(visible_at) FROM messages WHERE visible_at > ?`, nanos(now)).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next visible message: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromNanos(next.Int64), true, nil
}

func (s *Store) ReleaseAllLeases(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `
		UPDATE instances SET lock_token = NULL, locked_until = 0 WHERE lock_token IS NOT NULL;
		UPDATE activity_tasks SET lock_token = NULL, locked_until = 0 WHERE lock_token IS NOT NULL;`)
	if err != nil {
		return fmt.Errorf("sqlite: release leases: %w", err)
	}
	return nil
}
