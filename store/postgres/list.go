package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// ListInstances returns a page of the instances q.Filter selects, newest
// first, and among those created at the same time the one created last
// first.
func (s *Store) ListInstances(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	w := where(q.Filter)
	query, err := sqlstore.ListQuery(w, q, summaryColumns, "seq")
	if err != nil {
		return store.InstancePage{}, fmt.Errorf("postgres: %w", err)
	}
	var page store.InstancePage
	err = s.read(ctx, func(r db) error {
		rows, err := r.Query(ctx, query, w.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page, err = sqlstore.Page(rows, q.Limit, func(r sqlstore.Rows, seq *int64) (store.InstanceSummary, error) { return scanSummary(r, seq) })
		return err
	})
	if err != nil {
		return page, fmt.Errorf("postgres: list instances: %w", err)
	}
	return page, nil
}

// CountInstances counts the instances f selects, per module and status,
// ordered by module and status.
func (s *Store) CountInstances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	w := where(f)
	var out []store.InstanceCount
	err := s.read(ctx, func(r db) error {
		out = nil
		rows, err := r.Query(ctx, `SELECT module_hash, status, count(*) FROM instances WHERE `+w.String()+
			` GROUP BY module_hash, status ORDER BY module_hash, status`, w.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c store.InstanceCount
			var status string
			if err := rows.Scan(&c.ModuleHash, &status, &c.Count); err != nil {
				return err
			}
			c.Status = engine.Status(status)
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: count instances: %w", err)
	}
	return out, nil
}

// where returns the condition on instances that f makes, in
// PostgreSQL's numbered placeholders.
func where(f store.InstanceFilter) *sqlstore.Where {
	w := sqlstore.NewWhere(func(n int) string { return "$" + strconv.Itoa(n) })
	w.Filter(f)
	return w
}

// Executions describes the executions of an instance whose history is
// kept, oldest first, from the first and last event of each.
func (s *Store) Executions(ctx context.Context, id string) ([]store.Execution, error) {
	var out []store.Execution
	err := s.read(ctx, func(r db) error {
		out = nil
		current, err := currentExecution(ctx, r, id)
		if err != nil {
			return err
		}
		rows, err := r.Query(ctx, `
			SELECT h.execution_id, h.n, f.payload, l.payload FROM (
				SELECT execution_id, count(*) AS n, min(event_id) AS first, max(event_id) AS last
				FROM history WHERE instance_id = $1 GROUP BY execution_id) h
			JOIN history f ON f.instance_id = $1 AND f.execution_id = h.execution_id AND f.event_id = h.first
			JOIN history l ON l.instance_id = $1 AND l.execution_id = h.execution_id AND l.event_id = h.last
			ORDER BY h.execution_id`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var execution, n int64
			var first, last []byte
			if err := rows.Scan(&execution, &n, &first, &last); err != nil {
				return err
			}
			out = append(out, sqlstore.Execution(execution, n, first, last))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		out = sqlstore.WithCurrent(out, current)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: executions of %q: %w", id, err)
	}
	return out, nil
}
