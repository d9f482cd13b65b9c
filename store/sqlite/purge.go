package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Purge deletes a finished instance with the history of all its
// executions, its messages and its activity tasks; its children live on
// and report to nobody. It returns an error wrapping store.ErrNotFinished
// if the instance has not finished, or store.ErrNotFound if it does not
// exist.
func (s *Store) Purge(ctx context.Context, id string) error {
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return purge(ctx, tx, id) }); err != nil {
		return fmt.Errorf("sqlite: purge %q: %w", id, err)
	}
	return nil
}

func purge(ctx context.Context, tx *sql.Tx, id string) error {
	var status string
	err := tx.QueryRowContext(ctx, `SELECT status FROM instances WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("instance %w", store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if !engine.Status(status).IsTerminal() {
		return fmt.Errorf("%w: it is %s; cancel it or wait for it to end, then purge it", store.ErrNotFinished, status)
	}
	// A child of the instance must not report to a new one that takes its
	// id.
	if err := detachChildren(ctx, tx, id, 0, `parent_id = NULL, parent_schedule_id = NULL`); err != nil {
		return err
	}
	for _, statement := range []string{
		`DELETE FROM history WHERE instance_id = ?`,
		`DELETE FROM messages WHERE instance_id = ?`,
		`DELETE FROM activity_tasks WHERE instance_id = ?`,
		`DELETE FROM instances WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, statement, id); err != nil {
			return err
		}
	}
	return nil
}
