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

// LockNextInstances locks, until now+lease, up to max unlocked instances
// with visible messages, in the order nextInstances serves them, and
// returns each with the length of its current execution's history and all
// its visible messages, oldest first. It returns none when no instance has
// work. Messages for finished instances are dropped on the way. It is one
// write, however many it locks.
func (s *Store) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int) ([]*store.WorkItem, error) {
	return leased(ctx, s, "instances", max, func(ctx context.Context, tx *sql.Tx, max int) ([]*store.WorkItem, error) {
		return lockNextInstances(ctx, tx, now, lease, max)
	})
}

func lockNextInstances(ctx context.Context, tx *sql.Tx, now time.Time, lease time.Duration, max int) ([]*store.WorkItem, error) {
	var items []*store.WorkItem
	for len(items) < max {
		want := max - len(items)
		next, err := nextInstances(ctx, tx, now, want)
		if err != nil {
			return nil, fmt.Errorf("sqlite: lock next instances: %w", err)
		}
		dropped := false
		for _, c := range next {
			if c.status.IsTerminal() {
				dropped = true
				// Nothing can apply to a finished instance: drop what
				// arrived.
				if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE instance_id = ? AND visible_at <= ?`, c.id, sqlstore.Nanos(now)); err != nil {
					return nil, fmt.Errorf("sqlite: drop messages of finished instance %q: %w", c.id, err)
				}
				continue
			}
			item, err := lockInstance(ctx, tx, c.id, now, lease)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		if len(next) < want && !dropped {
			break // there is no more
		}
	}
	return items, nil
}

// candidate is an unlocked instance with visible messages.
type candidate struct {
	id     string
	status engine.Status
}

// The order of service. First the instances that have begun: by their
// oldest message visible at once or timer come due, whichever is older (a
// timer that came due waits for the messages older than it, not for those
// after it). Then new instances, by their start. So in a burst of starts
// the instances already running finish first, and stay in the host's
// cache meanwhile, instead of every instance taking its first step before
// any takes its second. Each query walks the messages_visible index from
// its start, so neither timers not yet due nor a backlog make it slower.
const (
	begunQuery = `
		SELECT id, status FROM (
			SELECT * FROM (
				SELECT m.id AS message, i.id, i.status FROM messages m JOIN instances i ON i.id = m.instance_id
				WHERE m.visible_at = ?1 AND i.locked_until <= ?3
				ORDER BY m.visible_at, m.id LIMIT ?4)
			UNION ALL
			SELECT * FROM (
				SELECT m.id AS message, i.id, i.status FROM messages m JOIN instances i ON i.id = m.instance_id
				WHERE m.visible_at >= ?2 AND m.visible_at <= ?3 AND i.locked_until <= ?3
				ORDER BY m.visible_at, m.id LIMIT ?4)
		) ORDER BY message`
	startQuery = `
		SELECT i.id, i.status FROM messages m JOIN instances i ON i.id = m.instance_id
		WHERE m.visible_at = ?5 AND i.locked_until <= ?3
		ORDER BY m.visible_at, m.id LIMIT ?4`
)

// nextInstances returns up to n unlocked instances with visible messages,
// in the order of service.
func nextInstances(ctx context.Context, tx *sql.Tx, now time.Time, n int) ([]candidate, error) {
	var out []candidate
	seen := map[string]bool{}
	for _, query := range []string{begunQuery, startQuery} {
		// An instance with several messages comes up once for each: ask for
		// more rows until there are n instances or no more rows.
		for limit := 2 * n; len(out) < n; limit *= 2 {
			rows, err := tx.QueryContext(ctx, query, sqlstore.VisibleNow, sqlstore.FirstDue, sqlstore.Nanos(now), limit, sqlstore.VisibleToStart)
			if err != nil {
				return nil, err
			}
			got := 0
			for rows.Next() && len(out) < n {
				got++
				var c candidate
				if err := rows.Scan(&c.id, &c.status); err != nil {
					rows.Close()
					return nil, err
				}
				if !seen[c.id] {
					seen[c.id] = true
					out = append(out, c)
				}
			}
			err = errors.Join(rows.Err(), rows.Close())
			if err != nil {
				return nil, err
			}
			if got < limit {
				break // every row read
			}
		}
	}
	return out, nil
}

// lockInstance locks an instance and reads its work.
func lockInstance(ctx context.Context, tx *sql.Tx, id string, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	item := &store.WorkItem{LockToken: sqlstore.NewToken()}
	if _, err := tx.ExecContext(ctx, `UPDATE instances SET lock_token = ?, locked_until = ?, attempt = attempt + 1 WHERE id = ?`,
		item.LockToken, sqlstore.Nanos(now.Add(lease)), id); err != nil {
		return nil, fmt.Errorf("sqlite: lock instance %q: %w", id, err)
	}
	// Read the instance in a second statement: a single UPDATE … RETURNING
	// is slower (BenchmarkTurn_1k).
	var err error
	item.Instance, err = scanInstance(tx.QueryRowContext(ctx, `SELECT `+instanceColumns+`, last_event_id, attempt FROM instances WHERE id = ?`, id),
		&item.HistoryLen, &item.Attempt)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock instance %q: %w", id, err)
	}
	if item.Messages, err = visibleMessages(ctx, tx, id, now); err != nil {
		return nil, fmt.Errorf("sqlite: messages of %q: %w", id, err)
	}
	return item, nil
}

// visibleMessages reads an instance's messages visible at now, oldest
// first.
func visibleMessages(ctx context.Context, tx *sql.Tx, id string, now time.Time) ([]store.Message, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, payload FROM messages WHERE instance_id = ? AND visible_at <= ? ORDER BY id`, id, sqlstore.Nanos(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlstore.Messages(rows)
}

// HasWork reports whether the instance has messages visible at now.
func (s *Store) HasWork(ctx context.Context, id string, now time.Time) (bool, error) {
	var more bool
	err := s.readers.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE instance_id = ? AND visible_at <= ?)`, id, sqlstore.Nanos(now)).Scan(&more)
	if err != nil {
		return false, fmt.Errorf("sqlite: work of %q: %w", id, err)
	}
	return more, nil
}

// AbandonInstance unlocks an instance without committing anything, if
// lockToken still holds its lock; otherwise it does nothing.
func (s *Store) AbandonInstance(ctx context.Context, id, lockToken string) error {
	err := s.writeUnsynced(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE instances SET lock_token = NULL, locked_until = 0 WHERE id = ? AND lock_token = ?`, id, lockToken)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: abandon instance %q: %w", id, err)
	}
	return nil
}

// NextVisibleAt returns the earliest time after now at which there may be
// new work: a message becomes visible, or the lock of an instance or the
// lease of an activity task expires. It returns false when there is no such
// time. Each part is one lookup in an index, whatever the backlog: workers
// call it every time they find no work.
func (s *Store) NextVisibleAt(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.readers.QueryRowContext(ctx, `
		SELECT min(t) FROM (
			SELECT min(visible_at) AS t FROM messages WHERE visible_at > ?1
			UNION ALL
			SELECT min(locked_until) FROM instances WHERE locked_until > ?1
			UNION ALL
			SELECT min(locked_until) FROM activity_tasks WHERE locked_until > ?1)`, sqlstore.Nanos(now)).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next visible message: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return sqlstore.FromNanos(next.Int64), true, nil
}

// ReleaseAllLeases unlocks every instance and activity task.
func (s *Store) ReleaseAllLeases(ctx context.Context) error {
	err := s.writeUnsynced(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			UPDATE instances SET lock_token = NULL, locked_until = 0 WHERE lock_token IS NOT NULL;
			UPDATE activity_tasks SET lock_token = NULL, locked_until = 0 WHERE lock_token IS NOT NULL;`)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: release leases: %w", err)
	}
	return nil
}
