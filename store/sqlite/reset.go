package sqlite

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

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

func (t writeTx) Restart(ctx context.Context, r store.Reset, execution int64) error {
	if err := t.exceptHeld(ctx, 0, true, `DELETE FROM activity_tasks WHERE instance_id = ? AND execution_id = ?`, r.InstanceID, execution); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	_, err := t.tx.ExecContext(ctx, `
		UPDATE instances SET execution_id = ?, module_hash = ?, status = ?, result = NULL, failure = NULL, custom_status = ?,
			updated_at = ?, last_event_id = ?, attempt = 1, counted_run = ?
		WHERE id = ?`,
		execution+1, r.Module, string(engine.StatusRunning), r.CustomStatus, sqlstore.Nanos(r.Now), len(r.Kept), t.s.run, r.InstanceID)
	return err
}
