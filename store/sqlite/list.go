package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// ListInstances returns a page of the instances q.Filter selects, newest
// first, and among those created at the same time the one created last
// first. Each filter has an index (instances_status, _name, _module,
// _parent, the primary key for an id prefix), so a page costs about its
// length, not the number of instances.
func (s *Store) ListInstances(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	var page store.InstancePage
	if q.Limit < 1 {
		return page, fmt.Errorf("sqlite: list instances: the limit is %d; it must be 1 or more", q.Limit)
	}
	cond, args := where(q.Filter)
	if q.After != "" {
		created, rowid, err := parseCursor(q.After)
		if err != nil {
			return page, err
		}
		cond += ` AND (created_at, rowid) < (?, ?)`
		args = append(args, created, rowid)
	}
	rows, err := s.readers.QueryContext(ctx, `SELECT `+summaryColumns+`, rowid FROM instances WHERE `+cond+
		` ORDER BY created_at DESC, rowid DESC LIMIT ?`, append(args, q.Limit+1)...)
	if err != nil {
		return page, fmt.Errorf("sqlite: list instances: %w", err)
	}
	defer rows.Close()
	page.Instances = []store.InstanceSummary{}
	var last int64
	for rows.Next() {
		if len(page.Instances) == q.Limit {
			// There is one more: the page ends at the one before.
			i := page.Instances[len(page.Instances)-1]
			page.Next = fmt.Sprintf("%d.%d", nanos(i.CreatedAt), last)
			break
		}
		i, err := scanSummary(rows, &last)
		if err != nil {
			return page, fmt.Errorf("sqlite: list instances: %w", err)
		}
		page.Instances = append(page.Instances, i)
	}
	if err := rows.Err(); err != nil {
		return page, fmt.Errorf("sqlite: list instances: %w", err)
	}
	return page, nil
}

// parseCursor reads a cursor ListInstances made: the creation time and
// the rowid of the last instance of a page.
func parseCursor(c string) (created, rowid int64, err error) {
	a, b, ok := strings.Cut(c, ".")
	created, err1 := strconv.ParseInt(a, 10, 64)
	rowid, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("sqlite: list instances: %w: %q is not a cursor this store made", store.ErrBadCursor, c)
	}
	return created, rowid, nil
}

// CountInstances counts the instances f selects, per module and status,
// ordered by module and status.
func (s *Store) CountInstances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	cond, args := where(f)
	rows, err := s.readers.QueryContext(ctx, `SELECT module_hash, status, count(*) FROM instances WHERE `+cond+
		` GROUP BY module_hash, status ORDER BY module_hash, status`, args...)
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

// where returns the condition on instances that f makes, and its
// arguments; "1" when f selects every instance.
func where(f store.InstanceFilter) (string, []any) {
	conds := []string{"1"}
	var args []any
	if len(f.Statuses) > 0 {
		conds = append(conds, "status IN ("+strings.Repeat("?, ", len(f.Statuses)-1)+"?)")
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	for _, c := range []struct {
		column, value string
	}{{"name", f.Name}, {"module_hash", f.ModuleHash}, {"parent_id", f.ParentID}} {
		if c.value != "" {
			conds = append(conds, c.column+" = ?")
			args = append(args, c.value)
		}
	}
	if f.IDPrefix != "" {
		conds = append(conds, "id >= ?")
		args = append(args, f.IDPrefix)
		if end, ok := prefixEnd(f.IDPrefix); ok {
			conds = append(conds, "id < ?")
			args = append(args, end)
		}
	}
	if !f.CreatedAfter.IsZero() {
		conds = append(conds, "created_at >= ?")
		args = append(args, nanos(f.CreatedAfter))
	}
	if !f.CreatedBefore.IsZero() {
		conds = append(conds, "created_at < ?")
		args = append(args, nanos(f.CreatedBefore))
	}
	if !f.FinishedBefore.IsZero() {
		conds = append(conds, finished, "updated_at < ?")
		args = append(args, nanos(f.FinishedBefore))
	}
	return strings.Join(conds, " AND "), args
}

// prefixEnd returns the least string greater than every string that
// begins with prefix, in SQLite's byte order, if there is one.
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
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
		var x store.Execution
		var first, last []byte
		if err := rows.Scan(&x.ID, &x.Events, &first, &last); err != nil {
			return nil, fmt.Errorf("sqlite: executions of %q: %w", id, err)
		}
		var f, l engine.Event
		if err := errors.Join(json.Unmarshal(first, &f), json.Unmarshal(last, &l)); err != nil {
			return nil, fmt.Errorf("sqlite: executions of %q: execution %d: %w", id, x.ID, err)
		}
		x.StartedAt = f.Time
		if l.IsTerminal() {
			x.EndedAt, x.End = l.Time, l.Kind
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: executions of %q: %w", id, err)
	}
	if len(out) == 0 || out[len(out)-1].ID != current {
		// The current execution has not begun.
		out = append(out, store.Execution{ID: current})
	}
	return out, nil
}
