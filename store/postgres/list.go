package postgres

import (
	"context"
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
// first.
func (s *Store) ListInstances(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	var page store.InstancePage
	if q.Limit < 1 {
		return page, fmt.Errorf("postgres: list instances: the limit is %d; it must be 1 or more", q.Limit)
	}
	var w conditions
	w.filter(q.Filter)
	if q.After != "" {
		created, seq, err := parseCursor(q.After)
		if err != nil {
			return page, err
		}
		w.add("(created_at, seq) < (" + w.arg(created) + ", " + w.arg(seq) + ")")
	}
	query := `SELECT ` + summaryColumns + `, seq FROM instances WHERE ` + w.String() + ` ORDER BY created_at DESC, seq DESC LIMIT ` + w.arg(q.Limit+1)
	err := s.read(ctx, func(r db) error {
		page = store.InstancePage{Instances: []store.InstanceSummary{}}
		rows, err := r.Query(ctx, query, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
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
				return err
			}
			page.Instances = append(page.Instances, i)
		}
		return rows.Err()
	})
	if err != nil {
		return page, fmt.Errorf("postgres: list instances: %w", err)
	}
	return page, nil
}

// parseCursor reads a cursor ListInstances made: the creation time and
// the sequence number of the last instance of a page.
func parseCursor(c string) (created, seq int64, err error) {
	a, b, ok := strings.Cut(c, ".")
	created, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("postgres: list instances: %w: %q is not a cursor this store made", store.ErrBadCursor, c)
	}
	return created, seq, nil
}

// CountInstances counts the instances f selects, per module and status,
// ordered by module and status.
func (s *Store) CountInstances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	var w conditions
	w.filter(f)
	var out []store.InstanceCount
	err := s.read(ctx, func(r db) error {
		out = nil
		rows, err := r.Query(ctx, `SELECT module_hash, status, count(*) FROM instances WHERE `+w.String()+
			` GROUP BY module_hash, status ORDER BY module_hash, status`, w.args...)
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

// conditions builds a WHERE clause with numbered arguments.
type conditions struct {
	conds []string
	args  []any
}

// arg adds an argument and returns its placeholder.
func (w *conditions) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// add adds a condition, whose arguments were added with arg.
func (w *conditions) add(cond string) { w.conds = append(w.conds, cond) }

func (w *conditions) String() string {
	if len(w.conds) == 0 {
		return "true"
	}
	return strings.Join(w.conds, " AND ")
}

// filter adds the conditions on instances that f makes.
func (w *conditions) filter(f store.InstanceFilter) {
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			statuses[i] = string(s)
		}
		w.add("status = ANY(" + w.arg(statuses) + ")")
	}
	for _, c := range []struct {
		column, value string
	}{{"name", f.Name}, {"module_hash", f.ModuleHash}, {"parent_id", f.ParentID}} {
		if c.value != "" {
			w.add(c.column + " = " + w.arg(c.value))
		}
	}
	if f.IDPrefix != "" {
		// The "C" collation makes this a range of the primary key.
		w.add("id >= " + w.arg(f.IDPrefix))
		if end, ok := prefixEnd(f.IDPrefix); ok {
			w.add("id < " + w.arg(end))
		}
	}
	if !f.CreatedAfter.IsZero() {
		w.add("created_at >= " + w.arg(nanos(f.CreatedAfter)))
	}
	if !f.CreatedBefore.IsZero() {
		w.add("created_at < " + w.arg(nanos(f.CreatedBefore)))
	}
	if !f.FinishedBefore.IsZero() {
		w.add(finished)
		w.add("updated_at < " + w.arg(nanos(f.FinishedBefore)))
	}
}

// prefixEnd returns the least string greater than every string that
// begins with prefix, in byte order, if there is one.
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
			var x store.Execution
			var first, last []byte
			if err := rows.Scan(&x.ID, &x.Events, &first, &last); err != nil {
				return err
			}
			var f, l engine.Event
			if err := errors.Join(json.Unmarshal(first, &f), json.Unmarshal(last, &l)); err != nil {
				return fmt.Errorf("execution %d: %w", x.ID, err)
			}
			x.StartedAt = f.Time
			if l.IsTerminal() {
				x.EndedAt, x.End = l.Time, l.Kind
			}
			out = append(out, x)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(out) == 0 || out[len(out)-1].ID != current {
			// The current execution has not begun.
			out = append(out, store.Execution{ID: current})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: executions of %q: %w", id, err)
	}
	return out, nil
}
