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
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// LockNextActivities leases, until now+lease, up to max of the activity
// tasks that are not leased (or whose lease has expired), first in the
// fair order (see writeTx.QueueActivities), counting the delivery in each one's
// Attempt. It returns none when there is none. It is one write, however
// many it leases.
func (s *Store) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int) ([]*store.ActivityWork, error) {
	return leased(ctx, s, "activities", max, func(ctx context.Context, tx *sql.Tx, max int) ([]*store.ActivityWork, error) {
		return lockNextActivities(ctx, tx, now, lease, max)
	})
}

func lockNextActivities(ctx context.Context, tx *sql.Tx, now time.Time, lease time.Duration, max int) ([]*store.ActivityWork, error) {
	// A select, then an update a task, rather than UPDATE … RETURNING,
	// which is slower (BenchmarkTurn_1k). The + keeps SQLite from the
	// locked_until index: walking the tasks in fair order (the index on
	// fair_rank, id) stops after the first max not leased, where the
	// locked_until index would gather every one of them to sort.
	rows, err := tx.QueryContext(ctx, `
		SELECT id, instance_id, execution_id, module_hash, schedule_id, name, input, attempt + 1, timeout_ms
		FROM activity_tasks WHERE +locked_until <= ? ORDER BY fair_rank, id LIMIT ?`, sqlstore.Nanos(now), max)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock next activities: %w", err)
	}
	var ws []*store.ActivityWork
	for rows.Next() {
		w := &store.ActivityWork{LockToken: sqlstore.NewToken()}
		var input []byte
		var timeoutMs int64
		if err := rows.Scan(&w.ID, &w.InstanceID, &w.ExecutionID, &w.ModuleHash, &w.Task.ScheduleID, &w.Task.Name, &input, &w.Attempt, &timeoutMs); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: lock next activities: %w", err)
		}
		w.Task.Input, w.Task.Timeout = input, time.Duration(timeoutMs)*time.Millisecond
		ws = append(ws, w)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("sqlite: lock next activities: %w", err)
	}
	for _, w := range ws {
		if _, err := tx.ExecContext(ctx, `UPDATE activity_tasks SET lock_token = ?, locked_until = ?, attempt = ? WHERE id = ?`,
			w.LockToken, sqlstore.Nanos(now.Add(lease)), w.Attempt, w.ID); err != nil {
			return nil, fmt.Errorf("sqlite: lock activity %d: %w", w.ID, err)
		}
	}
	return ws, nil
}

// CompleteActivity removes a leased activity task and enqueues its result
// for its instance at now, visible at once, atomically. It returns an error
// wrapping store.ErrLeaseLost if w's lease no longer holds the task. It does
// not wait for the disk to sync (see write.go).
func (s *Store) CompleteActivity(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time) error {
	return s.writeUnsynced(ctx, func(ctx context.Context, tx *sql.Tx) error { return completeActivity(ctx, tx, w, result, now) })
}

func completeActivity(ctx context.Context, tx *sql.Tx, w *store.ActivityWork, result engine.Event, now time.Time) error {
	var instanceID string
	var execution, schedule int64
	err := tx.QueryRowContext(ctx, `SELECT instance_id, execution_id, schedule_id FROM activity_tasks WHERE id = ? AND lock_token = ?`, w.ID, w.LockToken).
		Scan(&instanceID, &execution, &schedule)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: complete activity %d (%q of %q): %w: it was handed to another worker or completed", w.ID, w.Task.Name, w.InstanceID, store.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	payload, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("sqlite: complete activity %d: encode %s: %w", w.ID, result.Kind, err)
	}
	if result.ScheduleID != schedule {
		return fmt.Errorf("sqlite: complete activity %d: the result names event %d, the task's event is %d", w.ID, result.ScheduleID, schedule)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE id = ?`, w.ID); err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	// The result goes to the execution that scheduled the task: if that one
	// has continued as new, to nobody.
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at)
		SELECT id, ?, ?, ? FROM instances WHERE id = ? AND execution_id = ?`, payload, sqlstore.VisibleNow, sqlstore.Nanos(now), instanceID, execution); err != nil {
		return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
	}
	return nil
}
