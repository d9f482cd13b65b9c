package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// ListInstances returns a page of the instances q.Filter selects, newest
// first, and among those created at the same time the one created last
// first. Each filter has an index (instances_status, _name, _module,
// _parent, the primary key for an id prefix), so a page costs about its
// length, not the number of instances.
func (s *Store) ListInstances(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	w := where(q.Filter)
	query, err := sqlstore.ListQuery(w, q, summaryColumns, "rowid")
	if err != nil {
		return store.InstancePage{}, fmt.Errorf("sqlite: %w", err)
	}
	rows, err := s.readers.QueryContext(ctx, query, w.Args...)
	if err != nil {
		return store.InstancePage{}, fmt.Errorf("sqlite: list instances: %w", err)
	}
	defer rows.Close()
	page, err := sqlstore.Page(rows, q.Limit, func(r sqlstore.Rows, seq *int64) (store.InstanceSummary, error) { return scanSummary(r, seq) })
	if err != nil {
		return page, fmt.Errorf("sqlite: list instances: %w", err)
	}
	return page, nil
}

// CountInstances counts the instances f selects, per module and status,
// ordered by module and status.
func (s *Store) CountInstances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	w := where(f)
	rows, err := s.readers.QueryContext(ctx, `SELECT module_hash, status, count(*) FROM instances WHERE `+w.String()+
		` GROUP BY module_hash, status ORDER BY module_hash, status`, w.Args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: count instances: %w", err)
	}
	defer rows.Close()
	var out []store.InstanceCount
	for rows.Next() {
		var c store.InstanceCount
		if err := rows.Scan(&c.ModuleHash, &c.Status, &c.Count); err != nil {
			return nil, fmt.Errorf("sqlite: count instances: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: count instances: %w", err)
	}
	return out, nil
}

// where returns the condition on instances that f makes, in SQLite's
// placeholders.
func where(f store.InstanceFilter) *sqlstore.Where {
	w := sqlstore.NewWhere(func(int) string { return "?" })
	w.Filter(f)
	return w
}

// Executions describes the executions of an instance whose history is
// kept, oldest first, from the first and last event of each.
func (s *Store) Executions(ctx context.Context, id string) ([]store.Execution, error) {
	var current int64
	err := s.readers.QueryRowContext(ctx, `SELECT execution_id FROM instances WHERE id = ?`, id).Scan(&current)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: executions of %q: %w", id, err)
	}
	rows, err := s.readers.QueryContext(ctx, `
		SELECT h.execution_id, h.n, f.payload, l.payload FROM (
			SELECT execution_id, count(*) AS n, min(event_id) AS first, max(event_id) AS last
			FROM history WHERE instance_id = ?1 GROUP BY execution_id) h
		JOIN history f ON f.instance_id = ?1 AND f.execution_id = h.execution_id AND f.event_id = h.first
		JOIN history l ON l.instance_id = ?1 AND l.execution_id = h.execution_id AND l.event_id = h.last
		ORDER BY h.execution_id`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: executions of %q: %w", id, err)
	}
	defer rows.Close()
	var out []store.Execution
	for rows.Next() {
		var execution, n int64
		var first, last []byte
		if err := rows.Scan(&execution, &n, &first, &last); err != nil {
			return nil, fmt.Errorf("sqlite: executions of %q: %w", id, err)
		}
		out = append(out, sqlstore.Execution(execution, n, first, last))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: executions of %q: %w", id, err)
	}
	return sqlstore.WithCurrent(out, current), nil
}
