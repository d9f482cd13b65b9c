package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// LockNextInstances locks, until now+lease, up to max unlocked instances
// with visible messages, in the order of service of store/sqlite (the
// instances that have begun by their oldest visible message, then new
// ones in the fair order of starts), and returns each with the length of its current
// execution's history and all its visible messages, oldest first; it
// passes over the instances of the modules skip names.
// Messages for finished instances are dropped on the way. Hosts that lock
// at once never take the same instance: each candidate row is taken FOR
// UPDATE SKIP LOCKED and must still be unlocked, so a host passes over
// what another is locking instead of waiting for it.
func (s *Store) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.WorkItem, error) {
	if max < 1 {
		return nil, fmt.Errorf("postgres: lock next instances: max is %d; it must be at least 1", max)
	}
	var items []*store.WorkItem
	err := s.writeUnsynced(ctx, func(tx *pipeTx) (err error) {
		items, err = s.lockNextInstances(ctx, tx, now, lease, max, skip)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: lock next instances: %w", err)
	}
	return items, nil
}

func (s *Store) lockNextInstances(ctx context.Context, tx *pipeTx, now time.Time, lease time.Duration, max int, skip []string) ([]*store.WorkItem, error) {
	var items []*store.WorkItem
	tried := map[string]bool{}
	for len(items) < max {
		want := max - len(items)
		next, err := nextInstances(ctx, tx, now, want, tried, skip)
		if err != nil {
			return nil, err
		}
		if len(next) == 0 {
			break
		}
		for _, id := range next {
			tried[id] = true
		}
		locked, err := s.lockInstances(ctx, tx, next, now, lease)
		if err != nil {
			return nil, err
		}
		items = append(items, locked...)
	}
	return items, nil
}

// lockBatch locks, in one statement, those of the instances $4 names that
// no one holds at $5 (FOR UPDATE SKIP LOCKED: those another host is
// locking are passed over) and have not finished, each with its own
// token ($1 and its id) for host $2 until $3; and drops the messages
// visible at $5 of those that have finished, since nothing can apply to
// them.
var lockBatch = `
	WITH free AS (
		SELECT id AS free_id, ` + sqlstore.Finished + ` AS finished FROM instances
		WHERE id = ANY($4) AND locked_until <= $5 FOR UPDATE SKIP LOCKED),
	dropped AS (
		DELETE FROM messages WHERE instance_id IN (SELECT free_id FROM free WHERE finished) AND visible_at <= $5)
	UPDATE instances SET lock_token = $1 || '.' || id, lock_owner = $2, locked_until = $3, attempt = attempt + 1
	FROM free WHERE id = free_id AND NOT finished
	RETURNING ` + sqlstore.InstanceColumns + `, last_event_id, attempt, lock_token`

// lockInstances locks those of ids that no one holds and have not
// finished (lockBatch), and reads their visible messages, in two round
// trips however many they are; it returns them in the order of ids.
func (s *Store) lockInstances(ctx context.Context, tx *pipeTx, ids []string, now time.Time, lease time.Duration) ([]*store.WorkItem, error) {
	rows, err := tx.Query(ctx, lockBatch, sqlstore.NewToken(), s.opts.HostID, sqlstore.Nanos(now.Add(lease)), ids, sqlstore.Nanos(now))
	if err != nil {
		return nil, fmt.Errorf("lock instances: %w", err)
	}
	locked, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.WorkItem, error) {
		item := &store.WorkItem{}
		item.Instance, err = sqlstore.ScanInstance(r, &item.HistoryLen, &item.Attempt, &item.LockToken)
		return item, err
	})
	if err != nil {
		return nil, fmt.Errorf("lock instances: %w", err)
	}
	slices.SortFunc(locked, func(a, b *store.WorkItem) int {
		return slices.Index(ids, a.Instance.ID) - slices.Index(ids, b.Instance.ID)
	})
	var batch pgx.Batch
	for _, item := range locked {
		batch.Queue(visibleQuery, item.Instance.ID, sqlstore.Nanos(now))
	}
	results := tx.SendBatch(ctx, &batch)
	defer results.Close()
	for _, item := range locked {
		if item.Messages, err = messagesOf(results.Query()); err != nil {
			return nil, fmt.Errorf("messages of %q: %w", item.Instance.ID, err)
		}
	}
	return locked, results.Close()
}

// The order of service, as in store/sqlite: first the instances that have
// begun, by their oldest message visible at once or timer come due, then
// new instances, children among them, in the fair order of starts
// (sqlstore.Dialect.InsertStart); passing over the instances already
// tried and those of the modules the host skips. Each part walks an index
// in its order and stops at its LIMIT, whatever the backlog behind
// (messages_visible for the messages visible at once, by id; the due
// timers, few, sorted; messages_start for the starts): an OR of the two
// kinds of message could only be read whole and sorted. Their arguments
// are now, the limit, the instances tried and the modules skipped.
var (
	begunQuery = `
		SELECT instance_id FROM (
			(SELECT m.id, m.instance_id FROM messages m WHERE m.visible_at = ` + visibleNow + ` AND ` + workable + ` ORDER BY m.id LIMIT $2)
			UNION ALL
			(SELECT m.id, m.instance_id FROM messages m WHERE m.visible_at >= ` + firstDue + ` AND m.visible_at <= $1 AND ` + workable + ` ORDER BY m.id LIMIT $2)
		) m ORDER BY id LIMIT $2`
	// The literal 1 (sqlstore.VisibleToStart) matches the partial index
	// messages_start.
	startQuery = `
		SELECT m.instance_id FROM messages m WHERE m.visible_at = 1 AND ` + workable + ` ORDER BY m.fair_rank, m.id LIMIT $2`
	// workable holds when message m's instance may be locked: not tried,
	// not locked, its module not skipped. The instance is a subquery
	// looked up by its key for each message the walk passes, where a join
	// would let the planner read every instance to hash them.
	workable   = `NOT (m.instance_id = ANY($3)) AND (SELECT i.locked_until <= $1 AND NOT (i.module_hash = ANY($4)) FROM instances i WHERE i.id = m.instance_id)`
	visibleNow = strconv.Itoa(sqlstore.VisibleNow)
	firstDue   = strconv.Itoa(sqlstore.FirstDue)
)

// nextInstances returns up to n unlocked instances with visible messages,
// in the order of service, leaving out those already tried and those of
// the modules skip names.
func nextInstances(ctx context.Context, tx *pipeTx, now time.Time, n int, tried map[string]bool, skip []string) ([]string, error) {
	triedIDs := make([]string, 0, len(tried))
	for id := range tried {
		triedIDs = append(triedIDs, id)
	}
	skip = array(skip)
	var out []string
	for _, query := range []string{begunQuery, startQuery} {
		// An instance with several messages comes up once for each: ask for
		// more rows until there are n instances or no more rows.
		for limit := 2 * n; len(out) < n; limit *= 2 {
			rows, err := tx.Query(ctx, query, sqlstore.Nanos(now), limit, triedIDs, skip)
			if err != nil {
				return nil, err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if len(out) < n && !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
			if len(ids) < limit {
				break // every row read
			}
		}
	}
	return out, nil
}

// array returns ids as a query argument: an empty array when there are
// none, where nil would be NULL (and x = ANY(NULL) is not false but NULL).
func array(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// holdInstance reads the work of an instance that runs execution and
// that no one holds at now, its row and its messages, in one round trip,
// and writes nothing: its row, locked (FOR UPDATE SKIP LOCKED) until tx ends,
// is the turn's lock, and the commit of the turn in tx writes the row
// once (RATIONALE.md, "Why does a step write its instance's row once,
// HOT?"). The delivery is counted as a lock counts it (attempt + 1),
// in the work item only: the commit sets the row's count back to none,
// as it does after a lock. It returns nil when the instance
// runs another execution or has finished, or another transaction or
// host holds it.
func holdInstance(ctx context.Context, tx *pipeTx, id string, execution int64, now time.Time) (*store.WorkItem, *sqlstore.Locked, error) {
	item, locked, err := turnWork(ctx, tx, sqlstore.NewToken(), id, now, `
		SELECT `+turnColumns+` FROM instances WHERE id = $1 AND execution_id = $2 AND locked_until <= $3 FOR UPDATE SKIP LOCKED`,
		id, execution, sqlstore.Nanos(now))
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && item.Instance.Status.IsTerminal():
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	}
	item.Attempt++
	return item, locked, nil
}

// turnColumns are the columns of an instance turnWork reads: its
// InstanceColumns, the length of its history, its deliveries counted
// (attempt) and its parent's event.
const turnColumns = sqlstore.InstanceColumns + `, last_event_id, attempt, parent_schedule_id`

// turnWork runs statement, which returns instance id's turnColumns, and
// reads the instance's messages visible at now, in one round trip, as
// the work of a turn held with token; it returns too what a commit of
// the turn in tx would read of the instance (writeTx.Locked). An error
// wraps pgx.ErrNoRows when statement returns no row.
func turnWork(ctx context.Context, tx *pipeTx, token, id string, now time.Time, statement string, args ...any) (*store.WorkItem, *sqlstore.Locked, error) {
	item := &store.WorkItem{LockToken: token}
	var batch pgx.Batch
	batch.Queue(statement, args...)
	batch.Queue(visibleQuery, id, sqlstore.Nanos(now))
	results := tx.SendBatch(ctx, &batch)
	defer results.Close()
	l := &sqlstore.Locked{Token: &item.LockToken}
	var err error
	if item.Instance, err = sqlstore.ScanInstance(results.QueryRow(), &item.HistoryLen, &item.Attempt, &l.ParentSchedule); err != nil {
		return nil, nil, fmt.Errorf("lock instance %q: %w", id, err)
	}
	if item.Messages, err = messagesOf(results.Query()); err != nil {
		return nil, nil, fmt.Errorf("messages of %q: %w", id, err)
	}
	l.Execution, l.LastEventID, l.ModuleHash = item.Instance.ExecutionID, item.HistoryLen, item.Instance.ModuleHash
	if item.Instance.ParentID != "" {
		l.Parent = &item.Instance.ParentID
	}
	return item, l, results.Close()
}

// visibleQuery reads the messages of instance $1 visible at $2, oldest
// first, walking messages_instance (TestQueuePlansWalkIndexes); hasWorkQuery
// says whether there is one.
const (
	visibleQuery = `SELECT id, payload FROM messages WHERE instance_id = $1 AND visible_at <= $2 ORDER BY id`
	hasWorkQuery = `SELECT EXISTS (SELECT 1 FROM messages WHERE instance_id = $1 AND visible_at <= $2)`
)

// messagesOf reads the messages visibleQuery returned.
func messagesOf(rows pgx.Rows, err error) ([]store.Message, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlstore.Messages(rows)
}

// HasWork reports whether the instance has messages visible at now.
func (s *Store) HasWork(ctx context.Context, id string, now time.Time) (bool, error) {
	var more bool
	err := s.read(ctx, func(q db) error {
		return q.QueryRow(ctx, hasWorkQuery, id, sqlstore.Nanos(now)).Scan(&more)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: work of %q: %w", id, err)
	}
	return more, nil
}

// AbandonInstance unlocks an instance without committing anything, if
// lockToken still holds its lock; otherwise it does nothing.
func (s *Store) AbandonInstance(ctx context.Context, id, lockToken string) error {
	err := s.writeAnnouncing(ctx, announceTurns, func(tx *pipeTx) error {
		_, err := tx.Exec(ctx, `UPDATE instances SET lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE id = $1 AND lock_token = $2`, id, lockToken)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: abandon instance %q: %w", id, err)
	}
	return nil
}

// NextVisibleAt returns the earliest time after now at which there may be
// new work: a message or a retried activity task becomes visible, or the
// lock of an instance or the lease of an activity task expires. Each part
// is one lookup in an index.
func (s *Store) NextVisibleAt(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next *int64
	err := s.read(ctx, func(q db) error {
		return q.QueryRow(ctx, `
			SELECT least(
				(SELECT min(visible_at) FROM messages WHERE visible_at > $1),
				(SELECT min(locked_until) FROM instances WHERE locked_until > $1),
				(SELECT min(locked_until) FROM activity_tasks WHERE locked_until > $1),
				(SELECT min(visible_at) FROM activity_tasks WHERE visible_at > $1))`, sqlstore.Nanos(now)).Scan(&next)
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("postgres: next visible message: %w", err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return sqlstore.FromNanos(*next), true, nil
}

// ReleaseAllLeases unlocks every instance and activity task this host
// (Options.HostID) holds. Other hosts' leases stay: they may be running
// the work.
func (s *Store) ReleaseAllLeases(ctx context.Context) error {
	err := s.writeUnsynced(ctx, func(tx *pipeTx) error {
		if _, err := tx.Exec(ctx, `UPDATE instances SET lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE lock_owner = $1`, s.opts.HostID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE activity_tasks SET lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE lock_owner = $1`, s.opts.HostID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: release leases: %w", err)
	}
	s.announce(announceTurns, announceActivities)
	return nil
}
