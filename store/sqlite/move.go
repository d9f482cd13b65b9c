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

// OpenInstances returns the instances on the module hash that have not
// finished, oldest first.
func (s *Store) OpenInstances(ctx context.Context, hash string) ([]store.Instance, error) {
	rows, err := s.readers.QueryContext(ctx, `SELECT `+instanceColumns+` FROM instances
		WHERE module_hash = ? AND status IN (?, ?) ORDER BY created_at, rowid`, hash, string(engine.StatusPending), string(engine.StatusRunning))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open instances of module %s: %w", hash, err)
	}
	defer rows.Close()
	var out []store.Instance
	for rows.Next() {
		inst, err := scanInstance(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: open instances of module %s: %w", hash, err)
		}
		out = append(out, inst)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: open instances of module %s: %w", hash, err)
	}
	return out, nil
}

// MoveInstance moves an instance to m.To and appends m.Event to its
// history, in one transaction, if the instance is as m expects and no turn
// holds it.
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
	if err := appendHistory(ctx, tx, m.InstanceID, c.execution, []engine.Event{m.Event}); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE instances SET module_hash = ?, last_event_id = ?, updated_at = ?, lock_token = NULL, locked_until = 0 WHERE id = ?`,
		m.To, m.Event.ID, nanos(time.Now()), m.InstanceID)
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
