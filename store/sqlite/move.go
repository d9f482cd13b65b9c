package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// MoveInstance moves an instance, and its activity tasks no worker holds,
// to m.To and appends m.Event to its history, in one transaction, if the
// instance is as m expects and no turn holds it.
func (s *Store) MoveInstance(ctx context.Context, m store.Move) error {
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return moveInstance(ctx, tx, m) }); err != nil {
		return fmt.Errorf("sqlite: move instance %q to module %s: %w", m.InstanceID, m.To, err)
	}
	return nil
}

func moveInstance(ctx context.Context, tx *sql.Tx, m store.Move) error {
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
	_, err = tx.ExecContext(ctx, `UPDATE instances SET module_hash = ?, last_event_id = ?, updated_at = ?, lock_token = NULL, locked_until = 0 WHERE id = ?`,
		m.To, m.Event.ID, nanos(m.Now), m.InstanceID)
	if err != nil {
		return err
	}
	// Its activity tasks no worker holds go with it; one a worker runs
	// ends on the module it started on.
	_, err = tx.ExecContext(ctx, `UPDATE activity_tasks SET module_hash = ? WHERE instance_id = ? AND execution_id = ? AND locked_until <= ?`,
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

// readCurrent reads an instance for a move or a reset, which must not
// happen while a turn holds it: a lock that has not expired at now.
func readCurrent(ctx context.Context, tx *sql.Tx, id string, now time.Time) (current, error) {
	var c current
	var status string
	var token sql.NullString
	var lockedUntil int64
	err := tx.QueryRowContext(ctx, `SELECT module_hash, status, execution_id, last_event_id, lock_token, locked_until FROM instances WHERE id = ?`, id).
		Scan(&c.module, &status, &c.execution, &c.last, &token, &lockedUntil)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return c, err
	}
	c.status = engine.Status(status)
	if token.Valid && lockedUntil > nanos(now) {
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
func moduleExists(ctx context.Context, tx *sql.Tx, hash string) error {
	var ok bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM modules WHERE hash = ?)`, hash).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("module %s %w", hash, store.ErrNotFound)
	}
	return nil
}
