package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// LockNextInstances locks, until now+lease, up to max unlocked instances
// with visible messages, the one whose oldest visible message is oldest
// first, and returns each with the length of its current execution's
// history and all its visible messages, oldest first. It returns none when
// no instance has work. Messages for finished instances are dropped on the
// way. It is one write, however many it locks.
func (s *Store) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int) ([]*store.WorkItem, error) {
	return leased(ctx, s, "instances", max, func(ctx context.Context, tx *sql.Tx) (*store.WorkItem, error) {
		return lockNextInstance(ctx, tx, now, lease)
	})
}

func lockNextInstance(ctx context.Context, tx *sql.Tx, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	for {
		id, status, err := nextInstance(ctx, tx, now)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: lock next instance: %w", err)
		}
		if !status.IsTerminal() {
			return lockInstance(ctx, tx, id, now, lease)
		}
		// Nothing can apply to a finished instance: drop what arrived.
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE instance_id = ? AND visible_at <= ?`, id, nanos(now)); err != nil {
			return nil, fmt.Errorf("sqlite: drop messages of finished instance %q: %w", id, err)
		}
	}
}

// nextInstance finds the unlocked instance with the oldest visible message:
// the older of the oldest message visible at once and the first timer to
// have come due. Each half walks the messages_visible index from its start
// and stops at the first message of an unlocked instance, so neither
// timers not yet due nor a backlog of work make it slower.
func nextInstance(ctx context.Context, tx *sql.Tx, now time.Time) (string, engine.Status, error) {
	var id, status string
	err := tx.QueryRowContext(ctx, `
		SELECT id, status FROM (
			SELECT * FROM (
				SELECT m.id AS message, i.id, i.status FROM messages m JOIN instances i ON i.id = m.instance_id
				WHERE m.visible_at = ?1 AND i.locked_until <= ?2
				ORDER BY m.visible_at, m.id LIMIT 1)
			UNION ALL
			SELECT * FROM (
				SELECT m.id AS message, i.id, i.status FROM messages m JOIN instances i ON i.id = m.instance_id
				WHERE m.visible_at > ?1 AND m.visible_at <= ?2 AND i.locked_until <= ?2
				ORDER BY m.visible_at, m.id LIMIT 1)
		) ORDER BY message LIMIT 1`, visibleNow, nanos(now)).Scan(&id, &status)
	return id, engine.Status(status), err
}

// lockInstance locks an instance and reads its work.
func lockInstance(ctx context.Context, tx *sql.Tx, id string, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	item := &store.WorkItem{LockToken: newToken()}
	if _, err := tx.ExecContext(ctx, `UPDATE instances SET lock_token = ?, locked_until = ?, attempt = attempt + 1 WHERE id = ?`,
		item.LockToken, nanos(now.Add(lease)), id); err != nil {
		return nil, fmt.Errorf("sqlite: lock instance %q: %w", id, err)
	}
	// Read the instance in a second statement: a single UPDATE … RETURNING
	// is slower (BenchmarkTurn_1k).
	var err error
	if item.Instance, err = getInstance(ctx, tx, id); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT last_event_id, attempt FROM instances WHERE id = ?`, id).Scan(&item.HistoryLen, &item.Attempt); err != nil {
		return nil, fmt.Errorf("sqlite: history length of %q: %w", id, err)
	}
	if item.Messages, err = visibleMessages(ctx, tx, id, now); err != nil {
		return nil, fmt.Errorf("sqlite: messages of %q: %w", id, err)
	}
	return item, nil
}

// visibleMessages reads an instance's messages visible at now, oldest
// first.
func visibleMessages(ctx context.Context, tx *sql.Tx, id string, now time.Time) ([]store.Message, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, payload FROM messages WHERE instance_id = ? AND visible_at <= ? ORDER BY id`, id, nanos(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Message
	for rows.Next() {
		var m store.Message
		var payload []byte
		if err := rows.Scan(&m.ID, &payload); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(payload, &m.Event); err != nil {
			return nil, fmt.Errorf("decode message %d: %w", m.ID, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
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
			SELECT min(locked_until) FROM activity_tasks WHERE locked_until > ?1)`, nanos(now)).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next visible message: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromNanos(next.Int64), true, nil
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
