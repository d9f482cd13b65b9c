package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// MoveInstance moves an instance, and its activity tasks no worker holds,
// to m.To and appends m.Event to its history, in one transaction, if the
// instance is as m expects and no turn holds it.
func (s *Store) MoveInstance(ctx context.Context, m store.Move) error {
	err := s.writeThen(ctx, func(ctx context.Context, tx txConn) error { return sqlstore.MoveInstance(ctx, s.writeTx(tx), m) },
		func(err error) { s.locks.operated(m.InstanceID, err == nil, false) })
	if err != nil {
		return fmt.Errorf("sqlite: move instance %q to module %s: %w", m.InstanceID, m.To, err)
	}
	return nil
}

// Current reads an instance for a move or a reset, which MoveInstance and
// ResetInstance run with writeThen: unless a turn holds the instance, no
// turn may take it until the operation has committed (operated).
func (t writeTx) Current(ctx context.Context, id string) (sqlstore.Current, error) {
	var c sqlstore.Current
	var status string
	err := t.tx.QueryRowContext(ctx, `SELECT module_hash, status, execution_id, last_event_id FROM instances WHERE id = ?`, id).
		Scan(&c.Module, &status, &c.Execution, &c.Last)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	c.Status = engine.Status(status)
	c.LockedUntil = t.s.locks.operate(id)
	c.Locked = c.LockedUntil > 0
	return c, err
}

// ResetInstance starts the next execution of an instance with the kept
// history, in one transaction, if the instance is as r expects and no turn
// holds it.
func (s *Store) ResetInstance(ctx context.Context, r store.Reset) error {
	err := s.writeThen(ctx, func(ctx context.Context, tx txConn) error { return sqlstore.ResetInstance(ctx, s.writeTx(tx), r) },
		func(err error) { s.locks.operated(r.InstanceID, err == nil, true) })
	if err != nil {
		return fmt.Errorf("sqlite: reset instance %q: %w", r.InstanceID, err)
	}
	return nil
}
