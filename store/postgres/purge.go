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

// Purge deletes a finished instance with the history of all its
// executions, its messages and its activity tasks; its children live on
// and report to nobody.
func (s *Store) Purge(ctx context.Context, id string) error {
	if err := s.write(ctx, func(tx pgx.Tx) error { return sqlstore.Purge(ctx, writeTx{tx}, id) }); err != nil {
		return fmt.Errorf("postgres: purge %q: %w", id, err)
	}
	return nil
}

// Status reads and locks (FOR UPDATE) the instance's row.
func (t writeTx) Status(ctx context.Context, id string) (engine.Status, bool, error) {
	var status string
	err := t.tx.QueryRow(ctx, `SELECT status FROM instances WHERE id = $1 FOR UPDATE`, id).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return engine.Status(status), err == nil, err
}

func (t writeTx) DeleteInstance(ctx context.Context, id string) error {
	for _, statement := range []string{
		// A child of the instance must not report to a new one that takes
		// its id.
		`UPDATE instances SET parent_id = NULL, parent_schedule_id = NULL WHERE parent_id = $1`,
		`DELETE FROM history WHERE instance_id = $1`,
		`DELETE FROM continued_executions WHERE instance_id = $1`,
		`DELETE FROM messages WHERE instance_id = $1`,
		`DELETE FROM activity_tasks WHERE instance_id = $1`,
		`DELETE FROM instances WHERE id = $1`,
	} {
		if _, err := t.tx.Exec(ctx, statement, id); err != nil {
			return err
		}
	}
	return nil
}

// PurgeInstances purges up to max of the finished instances f selects, in
// one transaction, and returns their ids. Instances another host is
// purging at once are skipped.
func (s *Store) PurgeInstances(ctx context.Context, f store.InstanceFilter, max int) ([]string, error) {
	if err := sqlstore.CheckMax(max); err != nil {
		return nil, fmt.Errorf("postgres: purge instances: %w", err)
	}
	w := where(f)
	w.Add(sqlstore.Finished)
	query := `SELECT id FROM instances WHERE ` + w.String() + ` LIMIT ` + w.Arg(max) + ` FOR UPDATE SKIP LOCKED`
	var ids []string
	err := s.write(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, w.Args...)
		if err != nil {
			return err
		}
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		return sqlstore.PurgeAll(ctx, writeTx{tx}, ids)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: purge instances: %w", err)
	}
	return ids, nil
}

// DeleteExecutions deletes the history of up to max of the executions
// that continued as new before before, those that ended first first, in
// one transaction, and returns how many.
func (s *Store) DeleteExecutions(ctx context.Context, before time.Time, max int) (int, error) {
	if err := sqlstore.CheckMax(max); err != nil {
		return 0, fmt.Errorf("postgres: delete executions: %w", err)
	}
	var n int
	err := s.write(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			DELETE FROM continued_executions WHERE (instance_id, execution_id) IN (
				SELECT instance_id, execution_id FROM continued_executions WHERE ended_at < $1 ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED)
			RETURNING instance_id, execution_id`, sqlstore.Nanos(before), max)
		if err != nil {
			return err
		}
		type execution struct {
			instance string
			id       int64
		}
		old, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (x execution, err error) {
			return x, r.Scan(&x.instance, &x.id)
		})
		if err != nil {
			return err
		}
		n = len(old)
		for _, x := range old {
			if _, err := tx.Exec(ctx, `DELETE FROM history WHERE instance_id = $1 AND execution_id = $2`, x.instance, x.id); err != nil {
				return fmt.Errorf("execution %d of %q: %w", x.id, x.instance, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: delete executions: %w", err)
	}
	return n, nil
}
