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

// Purge deletes a finished instance with the history of all its
// executions, its messages and its activity tasks; its children live on
// and report to nobody. It returns an error wrapping store.ErrNotFinished
// if the instance has not finished, or store.ErrNotFound if it does not
// exist.
func (s *Store) Purge(ctx context.Context, id string) error {
	if err := s.write(ctx, func(ctx context.Context, tx txConn) error { return sqlstore.Purge(ctx, writeTx{tx, s}, id) }); err != nil {
		return fmt.Errorf("sqlite: purge %q: %w", id, err)
	}
	return nil
}

func (t writeTx) Status(ctx context.Context, id string) (engine.Status, bool, error) {
	var status string
	err := t.tx.QueryRowContext(ctx, `SELECT status FROM instances WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return engine.Status(status), err == nil, err
}

func (t writeTx) DeleteInstance(ctx context.Context, id string) error {
	if err := detachChildren(ctx, t.tx, id, 0, `parent_id = NULL, parent_schedule_id = NULL`); err != nil {
		return err
	}
	for _, statement := range []string{
		`DELETE FROM history WHERE instance_id = ?`,
		`DELETE FROM continued_executions WHERE instance_id = ?`,
		`DELETE FROM messages WHERE instance_id = ?`,
		`DELETE FROM activity_tasks WHERE instance_id = ?`,
		`DELETE FROM instances WHERE id = ?`,
	} {
		if _, err := t.tx.ExecContext(ctx, statement, id); err != nil {
			return err
		}
	}
	t.s.first.changed(1) // its messages (first.go)
	return nil
}

// PurgeInstances purges up to max of the finished instances f selects, in
// one transaction, and returns their ids. It takes them in no order: a
// sort would read every one selected for each batch.
func (s *Store) PurgeInstances(ctx context.Context, f store.InstanceFilter, max int) ([]string, error) {
	if err := sqlstore.CheckMax(max); err != nil {
		return nil, fmt.Errorf("sqlite: purge instances: %w", err)
	}
	w := where(f)
	w.Add(sqlstore.Finished)
	query := `SELECT id FROM instances WHERE ` + w.String() + ` LIMIT ` + w.Arg(max)
	var ids []string
	err := s.write(ctx, func(ctx context.Context, tx txConn) error {
		ids = nil
		rows, err := tx.QueryContext(ctx, query, w.Args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		return sqlstore.PurgeAll(ctx, writeTx{tx, s}, ids)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: purge instances: %w", err)
	}
	return ids, nil
}

// DeleteExecutions deletes the history of up to max of the executions
// that continued as new before before, those that ended first first, in
// one transaction, and returns how many.
func (s *Store) DeleteExecutions(ctx context.Context, before time.Time, max int) (int, error) {
	if err := sqlstore.CheckMax(max); err != nil {
		return 0, fmt.Errorf("sqlite: delete executions: %w", err)
	}
	type execution struct {
		instance string
		id       int64
	}
	var old []execution
	err := s.write(ctx, func(ctx context.Context, tx txConn) error {
		old = nil
		rows, err := tx.QueryContext(ctx, `SELECT instance_id, execution_id FROM continued_executions WHERE ended_at < ? ORDER BY ended_at LIMIT ?`, sqlstore.Nanos(before), max)
		if err != nil {
			return err
		}
		for rows.Next() {
			var x execution
			if err := rows.Scan(&x.instance, &x.id); err != nil {
				rows.Close()
				return err
			}
			old = append(old, x)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, x := range old {
			for _, statement := range []string{
				`DELETE FROM history WHERE instance_id = ? AND execution_id = ?`,
				`DELETE FROM continued_executions WHERE instance_id = ? AND execution_id = ?`,
			} {
				if _, err := tx.ExecContext(ctx, statement, x.instance, x.id); err != nil {
					return fmt.Errorf("execution %d of %q: %w", x.id, x.instance, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete executions: %w", err)
	}
	return len(old), nil
}
