package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// MoveInstance moves an instance, and its activity tasks no worker holds,
// to m.To and appends m.Event to its history, in one transaction, if the
// instance is as m expects and no turn holds it.
func (s *Store) MoveInstance(ctx context.Context, m store.Move) error {
	if err := s.write(ctx, func(tx *pipeTx) error { return sqlstore.MoveInstance(ctx, newWriteTx(tx), m) }); err != nil {
		return fmt.Errorf("postgres: move instance %q to module %s: %w", m.InstanceID, m.To, err)
	}
	return nil
}

// Current reads and locks (FOR UPDATE) an instance's row for a move or a
// reset.
func (t writeTx) Current(ctx context.Context, id string) (sqlstore.Current, error) {
	var c sqlstore.Current
	var status string
	var token *string
	err := t.tx.QueryRow(ctx, `SELECT module_hash, status, execution_id, last_event_id, lock_token, locked_until FROM instances WHERE id = $1 FOR UPDATE`, id).
		Scan(&c.Module, &status, &c.Execution, &c.Last, &token, &c.LockedUntil)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	c.Status, c.Locked = engine.Status(status), token != nil
	return c, err
}

// ResetInstance starts the next execution of an instance with the kept
// history, in one transaction, if the instance is as r expects and no turn
// holds it.
func (s *Store) ResetInstance(ctx context.Context, r store.Reset) error {
	if err := s.write(ctx, func(tx *pipeTx) error { return sqlstore.ResetInstance(ctx, newWriteTx(tx), r) }); err != nil {
		return fmt.Errorf("postgres: reset instance %q: %w", r.InstanceID, err)
	}
	return nil
}
