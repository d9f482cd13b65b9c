package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// ResetInstance starts the next execution of an instance with the kept
// history, in one transaction, if the instance is as r expects and no turn
// holds it.
func (s *Store) ResetInstance(ctx context.Context, r store.Reset) error {
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return resetInstance(ctx, tx, r) }); err != nil {
		return fmt.Errorf("sqlite: reset instance %q: %w", r.InstanceID, err)
	}
	return nil
}

func resetInstance(ctx context.Context, tx *sql.Tx, r store.Reset) error {
	c, err := readCurrent(ctx, tx, r.InstanceID, r.Now)
	if err != nil {
		return err
	}
	if err := c.expect(r.ExecutionID, r.HistoryLen); err != nil {
		return err
	}
	if err := moduleExists(ctx, tx, r.Module); err != nil {
		return err
	}
	left, err := takeLeftovers(ctx, tx, r.InstanceID)
	if err != nil {
		return err
	}
	for _, child := range r.Detach {
		if _, err := tx.ExecContext(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE id = ? AND parent_id = ?`, child, r.InstanceID); err != nil {
			return fmt.Errorf("detach child %q: %w", child, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE instance_id = ? AND execution_id = ? AND lock_token IS NULL`, r.InstanceID, c.execution); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	next := c.execution + 1
	_, err = tx.ExecContext(ctx, `
		UPDATE instances SET execution_id = ?, module_hash = ?, status = ?, result = NULL, failure = NULL, custom_status = ?,
			updated_at = ?, last_event_id = ?, lock_token = NULL, locked_until = 0, attempt = 0
		WHERE id = ?`,
		next, r.Module, string(engine.StatusRunning), r.CustomStatus, nanos(r.Now), len(r.Kept), r.InstanceID)
	if err != nil {
		return err
	}
	if err := (turnTx{tx}).AppendHistory(ctx, r.InstanceID, next, r.Kept); err != nil {
		return err
	}
	if err := (turnTx{tx}).QueueActivities(ctx, r.InstanceID, next, r.Module, r.InFlight.Activities, r.Now); err != nil {
		return err
	}
	if _, err := enqueue(ctx, tx, r.InstanceID, r.Marker, visibleNow, r.Now); err != nil {
		return fmt.Errorf("the reset marker: %w", err)
	}
	for _, child := range r.InFlight.Children {
		if err := reportAgain(ctx, tx, r.InstanceID, child, r.Now); err != nil {
			return fmt.Errorf("child %q: %w", child.InstanceID, err)
		}
	}
	for _, ev := range r.Raise {
		if _, err := enqueue(ctx, tx, r.InstanceID, ev, visibleNow, r.Now); err != nil {
			return fmt.Errorf("raise %s again: %w", ev.Name, err)
		}
	}
	if err := requeue(ctx, tx, r.InstanceID, left); err != nil {
		return err
	}
	return sqlstore.QueueTimers(ctx, turnTx{tx}, r.InstanceID, r.InFlight.Timers, r.Now)
}

// reportAgain makes a child the reset execution waits for report to it: at
// once if it has ended (its report went to the discarded events), when it
// ends if it runs. A child that no longer exists (purged) reports a
// failure that says so.
func reportAgain(ctx context.Context, tx *sql.Tx, parent string, child engine.ChildTask, now time.Time) error {
	var status string
	var result []byte
	var failure sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT status, result, failure FROM instances WHERE id = ? AND parent_id = ?`, child.InstanceID, parent).
		Scan(&status, &result, &failure)
	if errors.Is(err, sql.ErrNoRows) {
		_, err := enqueue(ctx, tx, parent, engine.ChildGone(child.ScheduleID, child.InstanceID), visibleNow, now)
		return err
	}
	if err != nil {
		return err
	}
	if engine.Status(status).IsTerminal() {
		f, err := decodeFailure(failure)
		if err != nil {
			return fmt.Errorf("decode failure: %w", err)
		}
		return sqlstore.ReportToParent(ctx, turnTx{tx}, parent, child.ScheduleID, engine.Status(status), result, f, now)
	}
	_, err = tx.ExecContext(ctx, `UPDATE instances SET parent_schedule_id = ? WHERE id = ?`, child.ScheduleID, child.InstanceID)
	return err
}
