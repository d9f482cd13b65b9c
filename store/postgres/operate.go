package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// MoveInstance moves an instance, and its activity tasks no worker holds,
// to m.To and appends m.Event to its history, in one transaction, if the
// instance is as m expects and no turn holds it.
func (s *Store) MoveInstance(ctx context.Context, m store.Move) error {
	if err := s.write(ctx, func(tx pgx.Tx) error { return moveInstance(ctx, tx, m) }); err != nil {
		return fmt.Errorf("postgres: move instance %q to module %s: %w", m.InstanceID, m.To, err)
	}
	return nil
}

func moveInstance(ctx context.Context, tx pgx.Tx, m store.Move) error {
	c, err := readCurrent(ctx, tx, m.InstanceID, m.Now)
	if err != nil {
		return err
	}
	switch {
	case c.module != m.From:
		return fmt.Errorf("%w: it runs on module %s now, not %s", store.ErrChanged, c.module, m.From)
	case c.status.IsTerminal():
		return fmt.Errorf("%w: it has finished (%s)", store.ErrChanged, c.status)
	}
	if err := c.expect(m.ExecutionID, m.HistoryLen); err != nil {
		return err
	}
	if m.Event.ID != c.last+1 {
		return fmt.Errorf("the move's event has id %d where history continues at %d", m.Event.ID, c.last+1)
	}
	if err := moduleExists(ctx, tx, m.To); err != nil {
		return err
	}
	if err := (turnTx{tx}).AppendHistory(ctx, m.InstanceID, c.execution, []engine.Event{m.Event}); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE instances SET module_hash = $1, last_event_id = $2, updated_at = $3, lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE id = $4`,
		m.To, m.Event.ID, nanos(m.Now), m.InstanceID)
	if err != nil {
		return err
	}
	// Its activity tasks no worker holds go with it; one a worker runs
	// ends on the module it started on.
	_, err = tx.Exec(ctx, `UPDATE activity_tasks SET module_hash = $1 WHERE instance_id = $2 AND execution_id = $3 AND locked_until <= $4`,
		m.To, m.InstanceID, c.execution, nanos(m.Now))
	return err
}

// current is what a move or a reset checks of an instance before it acts.
type current struct {
	module    string
	status    engine.Status
	execution int64
	last      int64
}

// readCurrent reads and locks (FOR UPDATE) an instance's row for a move
// or a reset, which must not happen while a turn holds it: a lock that has
// not expired at now.
func readCurrent(ctx context.Context, tx pgx.Tx, id string, now time.Time) (current, error) {
	var c current
	var status string
	var token *string
	var lockedUntil int64
	err := tx.QueryRow(ctx, `SELECT module_hash, status, execution_id, last_event_id, lock_token, locked_until FROM instances WHERE id = $1 FOR UPDATE`, id).
		Scan(&c.module, &status, &c.execution, &c.last, &token, &lockedUntil)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return c, err
	}
	c.status = engine.Status(status)
	if token != nil && lockedUntil > nanos(now) {
		return c, fmt.Errorf("%w: a turn holds it until %s", store.ErrBusy, fromNanos(lockedUntil).Format(time.RFC3339Nano))
	}
	return c, nil
}

// expect returns ErrChanged unless the instance is in execution, with
// historyLen events.
func (c current) expect(execution, historyLen int64) error {
	if c.execution != execution || c.last != historyLen {
		return fmt.Errorf("%w: its history went on (execution %d with %d events, where execution %d with %d was checked)",
			store.ErrChanged, c.execution, c.last, execution, historyLen)
	}
	return nil
}

// moduleExists returns ErrNotFound unless the module hash is deployed.
func moduleExists(ctx context.Context, tx pgx.Tx, hash string) error {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM modules WHERE hash = $1)`, hash).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("module %s %w", hash, store.ErrNotFound)
	}
	return nil
}

// ResetInstance starts the next execution of an instance with the kept
// history, in one transaction, if the instance is as r expects and no turn
// holds it.
func (s *Store) ResetInstance(ctx context.Context, r store.Reset) error {
	if err := s.write(ctx, func(tx pgx.Tx) error { return resetInstance(ctx, tx, r) }); err != nil {
		return fmt.Errorf("postgres: reset instance %q: %w", r.InstanceID, err)
	}
	return nil
}

func resetInstance(ctx context.Context, tx pgx.Tx, r store.Reset) error {
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
	if len(r.Detach) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE id = ANY($1) AND parent_id = $2`, r.Detach, r.InstanceID); err != nil {
			return fmt.Errorf("detach children: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM activity_tasks WHERE instance_id = $1 AND execution_id = $2 AND lock_token IS NULL`, r.InstanceID, c.execution); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	next := c.execution + 1
	_, err = tx.Exec(ctx, `
		UPDATE instances SET execution_id = $1, module_hash = $2, status = $3, result = NULL, failure = NULL, custom_status = $4,
			updated_at = $5, last_event_id = $6, lock_token = NULL, lock_owner = NULL, locked_until = 0, attempt = 0
		WHERE id = $7`,
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
// once if it has ended, when it ends if it runs; a child that no longer
// exists is engine.ChildGone.
func reportAgain(ctx context.Context, tx pgx.Tx, parent string, child engine.ChildTask, now time.Time) error {
	var status string
	var result []byte
	var failure *string
	err := tx.QueryRow(ctx, `SELECT status, result, failure FROM instances WHERE id = $1 AND parent_id = $2`, child.InstanceID, parent).
		Scan(&status, &result, &failure)
	if errors.Is(err, pgx.ErrNoRows) {
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
	_, err = tx.Exec(ctx, `UPDATE instances SET parent_schedule_id = $1 WHERE id = $2`, child.ScheduleID, child.InstanceID)
	return err
}
