package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// LockNextInstances locks, until now+lease, up to max unlocked instances
// with visible messages, in the order nextInstances serves them, and
// returns each with the length of its current execution's history and all
// its visible messages, oldest first; it passes over the instances of the
// modules skip names. It returns none when no instance has work. Messages
// for finished instances are dropped on the way.
//
// The locks are in memory (locks.go): finding and reading the work runs on
// the read connections, beside the writer, and the writer is asked for
// nothing unless a delivery was not counted in advance or a finished
// instance's messages are to be dropped (one write for the batch).
func (s *Store) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.WorkItem, error) {
	if max < 1 {
		return nil, fmt.Errorf("sqlite: lock next instances: max is %d; it must be at least 1", max)
	}
	if err := s.writable(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: lock next instances: %w", err)
	}
	passOver, err := newSkipping(skip)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock next instances: %w", err)
	}
	var items []*store.WorkItem
	for len(items) < max {
		more, dropped, err := s.lockSome(ctx, now, lease, max-len(items), passOver)
		if err != nil {
			return nil, fmt.Errorf("sqlite: lock next instances: %w", err)
		}
		items = append(items, more...)
		if !dropped {
			break // there is no more
		}
	}
	return items, nil
}

// taken is an instance lockSome locked: counted reports that its delivery
// was counted in advance by a commit of this run (instanceLocks.lock).
type taken struct {
	item    *store.WorkItem
	counted bool
	// attempt and run are the row's attempt and counted_run.
	attempt, run int64
	// gone is set when the instance does not exist (its messages are
	// dropped).
	gone bool
	// stale are the tasks of activity results kept for the instance that
	// nothing will take (results.go).
	stale []int64
}

// lockSome locks up to n instances with work, passing over those of the
// modules skip names, and reports whether it dropped the messages of a
// finished one (there may be more to find).
func (s *Store) lockSome(ctx context.Context, now time.Time, lease time.Duration, n int, skip *skipping) (items []*store.WorkItem, dropped bool, err error) {
	at, until := sqlstore.Nanos(now), sqlstore.Nanos(now.Add(lease))
	kept, _ := s.results.waiting()
	none, err := s.noMessageAt(ctx, at)
	if err != nil {
		return nil, false, err
	}
	q := querier(s.readers)
	if none {
		q = nil // only kept results to take
	}
	next, err := nextInstances(ctx, q, now, n, s.locks.count(at), kept, skip, func(id string) bool { return s.locks.busy(id, at) })
	if err != nil {
		return nil, false, err
	}
	var locked []*taken
	for _, id := range next {
		t := &taken{item: &store.WorkItem{LockToken: sqlstore.NewToken()}}
		var ok bool
		if ok, t.counted = s.locks.lock(id, t.item.LockToken, at, until); ok {
			t.item.Instance.ID = id
			locked = append(locked, t)
		}
	}
	// Read them only now that they are locked: what the read sees
	// includes every commit that let them go.
	if err := s.readWork(ctx, locked, now); err != nil {
		s.unlockAll(locked)
		return nil, false, err
	}
	var finished, uncounted, empty []*taken
	stale := false
	for _, t := range locked {
		stale = stale || len(t.stale) > 0
		switch {
		case t.gone || t.item.Instance.Status.IsTerminal():
			finished = append(finished, t)
		case len(t.item.Messages) == 0 || skip.has(t.item.Instance.ModuleHash):
			// A turn took them since nextInstances looked, or they are
			// activity results kept for an instance skip passes over.
			empty = append(empty, t)
		case !t.counted || t.run != s.run:
			uncounted = append(uncounted, t)
		}
	}
	s.unlockAll(empty)
	if len(finished) > 0 || len(uncounted) > 0 || stale {
		err := s.writeUnsynced(ctx, func(ctx context.Context, tx txConn) error {
			for _, t := range locked {
				if err := dropResults(ctx, tx, t.stale); err != nil {
					return err
				}
			}
			for _, t := range finished {
				// Nothing can apply to a finished instance (or to none):
				// drop what arrived.
				if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE instance_id = ? AND visible_at <= ?`, t.item.Instance.ID, at); err != nil {
					return fmt.Errorf("drop messages of finished instance %q: %w", t.item.Instance.ID, err)
				}
				s.first.changed(1)
			}
			for _, t := range uncounted {
				if _, err := tx.ExecContext(ctx, `UPDATE instances SET attempt = attempt + 1 WHERE id = ?`, t.item.Instance.ID); err != nil {
					return fmt.Errorf("count the delivery of %q: %w", t.item.Instance.ID, err)
				}
			}
			return nil
		})
		if err == nil {
			for _, t := range locked {
				s.forgetResults(t.item.Instance.ID, t.stale)
			}
		}
		s.unlockAll(finished)
		if err != nil {
			s.unlockAll(locked)
			return nil, false, err
		}
	}
	for _, t := range locked {
		if t.gone || t.item.Instance.Status.IsTerminal() || len(t.item.Messages) == 0 || skip.has(t.item.Instance.ModuleHash) {
			continue
		}
		t.item.Attempt = t.delivery(s.run)
		items = append(items, t.item)
	}
	return items, len(finished) > 0, nil
}

// unlockAll undoes the locks of instances lockSome hands out no work of.
func (s *Store) unlockAll(ts []*taken) {
	for _, t := range ts {
		s.locks.undo(t.item.Instance.ID, t.item.LockToken, t.counted)
	}
}

// readWork reads each locked instance and its messages visible at now, in
// one read transaction; one instance with no message to read (and its
// results kept in memory), as a step's next turn is, is one statement,
// which needs no transaction of its own.
func (s *Store) readWork(ctx context.Context, locked []*taken, now time.Time) error {
	if len(locked) == 0 {
		return nil
	}
	// Asked only now that they are locked, as the read below is begun.
	none, err := s.noMessageAt(ctx, sqlstore.Nanos(now))
	if err != nil {
		return err
	}
	var tx querier = s.readers
	if len(locked) > 1 || !none {
		var end func()
		if tx, end, err = s.readers.begin(ctx); err != nil {
			return err
		}
		defer end()
	}
	ctx = context.WithoutCancel(ctx)
	for _, t := range locked {
		id := t.item.Instance.ID
		t.item.Instance, err = sqlstore.ScanInstance(tx.QueryRowContext(ctx, `SELECT `+sqlstore.InstanceColumns+`, last_event_id, attempt, counted_run FROM instances WHERE id = ?`, id),
			&t.item.HistoryLen, &t.attempt, &t.run)
		if errors.Is(err, sql.ErrNoRows) {
			t.gone = true
			for _, r := range s.results.of(id) {
				t.stale = append(t.stale, r.task)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("read instance %q: %w", id, err)
		}
		if none {
			t.item.Messages = nil
		} else if t.item.Messages, err = visibleMessages(ctx, tx, id, now); err != nil {
			return fmt.Errorf("messages of %q: %w", id, err)
		}
		if t.stale, err = s.withResults(ctx, tx, t, now); err != nil {
			return fmt.Errorf("activity results of %q: %w", id, err)
		}
	}
	return nil
}

// The order of service. First the instances that have begun: by their
// oldest message visible at once or timer come due, whichever is older (a
// timer that came due waits for the messages older than it, not for those
// after it). Then new instances, children among them, in the fair order of
// starts (sqlstore.Dialect.InsertStart): by rank, then as they came, so
// that the starts of one parent's many children take turns with the
// instances started after them. So in a burst of starts the instances
// already running finish first, and stay in the host's cache meanwhile,
// instead of every instance taking its first step before any takes its
// second. Each query walks an index from its start (messages_visible,
// messages_start), so neither timers not yet due nor a backlog make it
// slower. Where %[1]s is, skippingQueries add passOver.
const (
	begunQuery = `
		SELECT instance_id FROM (
			SELECT * FROM (
				SELECT id, instance_id FROM messages WHERE visible_at = ?1%[1]s
				ORDER BY visible_at, id LIMIT ?4)
			UNION ALL
			SELECT * FROM (
				SELECT id, instance_id FROM messages WHERE visible_at >= ?2 AND visible_at <= ?3%[1]s
				ORDER BY visible_at, id LIMIT ?4)
		) ORDER BY id`
	// startQuery's literal 1 is sqlstore.VisibleToStart, which the
	// partial index messages_start covers (see InsertStart in
	// dialect.go for INDEXED BY).
	startQuery = `
		SELECT instance_id FROM messages INDEXED BY messages_start WHERE visible_at = 1%[1]s
		ORDER BY fair_rank, id LIMIT ?4`
	// passOver leaves out the messages of the instances that run on the
	// modules of the JSON list ?5: one lookup of the instance's row for
	// each message read, and only when there are modules to pass over.
	passOver = `
				AND NOT EXISTS (SELECT 1 FROM instances WHERE instances.id = messages.instance_id AND instances.module_hash IN (SELECT value FROM json_each(?5)))`
)

// The queries of the order of service, begun then start: plainQueries
// serve every instance, skippingQueries pass over the instances of the
// modules in their sixth argument.
var (
	plainQueries    = [2]string{fmt.Sprintf(begunQuery, ""), fmt.Sprintf(startQuery, "")}
	skippingQueries = [2]string{fmt.Sprintf(begunQuery, passOver), fmt.Sprintf(startQuery, passOver)}
)

// skipping is the modules whose instances a fetch passes over: their
// hashes, as a set and as the JSON list skippingQueries take.
type skipping struct {
	hashes map[string]bool
	list   string
}

// newSkipping returns what a fetch passes over for skip, or nil when
// skip is empty. A nil *skipping passes over nothing.
func newSkipping(skip []string) (*skipping, error) {
	if len(skip) == 0 {
		return nil, nil
	}
	list, err := idList(skip)
	if err != nil {
		return nil, err
	}
	sk := &skipping{hashes: map[string]bool{}, list: list}
	for _, h := range skip {
		sk.hashes[h] = true
	}
	return sk, nil
}

// has reports whether sk passes over the instances of the module hash.
func (sk *skipping) has(hash string) bool { return sk != nil && sk.hashes[hash] }

// nextInstances returns up to n instances with visible messages, or with
// activity results kept (kept, results.go), that busy does not hold and
// skip does not pass over, in the order of service: kept results come
// after the messages of the instances that have begun (they are the
// newest) and before the starts. About locked instances are locked at now,
// whose messages come up too. With q nil, no message is visible: it
// returns kept results only.
func nextInstances(ctx context.Context, q querier, now time.Time, n, locked int, kept []string, skip *skipping, busy func(id string) bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	queries := plainQueries
	args := []any{sqlstore.VisibleNow, sqlstore.FirstDue, sqlstore.Nanos(now), 0}
	if skip != nil {
		queries = skippingQueries
		args = append(args, skip.list)
	}
	for i, query := range queries {
		if i == 1 {
			for _, id := range kept {
				if len(out) < n && !seen[id] {
					seen[id] = true
					if !busy(id) {
						out = append(out, id)
					}
				}
			}
		}
		// An instance with several messages comes up once for each, and a
		// busy one is passed over: ask for more rows until there are n
		// instances or no more rows.
		for limit := 2*n + locked; q != nil && len(out) < n; limit *= 2 {
			args[3] = limit
			rows, err := q.QueryContext(ctx, query, args...)
			if err != nil {
				return nil, err
			}
			got := 0
			for rows.Next() && len(out) < n {
				got++
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return nil, err
				}
				if !seen[id] {
					seen[id] = true
					if !busy(id) {
						out = append(out, id)
					}
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

// visibleMessages reads an instance's messages visible at now, oldest
// first.
func visibleMessages(ctx context.Context, tx querier, id string, now time.Time) ([]store.Message, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, payload FROM messages WHERE instance_id = ? AND visible_at <= ? ORDER BY id`, id, sqlstore.Nanos(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlstore.Messages(rows)
}

// HasWork reports whether the instance has messages visible at now. It
// reads nothing when its results wait in memory or the store knows that no
// message is visible (first.go).
func (s *Store) HasWork(ctx context.Context, id string, now time.Time) (bool, error) {
	if s.results.has(id) {
		return true, nil
	}
	none, err := s.noMessageAt(ctx, sqlstore.Nanos(now))
	var more bool
	if err == nil && !none {
		err = s.readers.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE instance_id = ? AND visible_at <= ?)`, id, sqlstore.Nanos(now)).Scan(&more)
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: work of %q: %w", id, err)
	}
	return more, nil
}

// AbandonInstance unlocks an instance without committing anything, if
// lockToken still holds its lock; otherwise it does nothing. It writes
// nothing: the lock is in memory, and the delivery it abandons is counted.
func (s *Store) AbandonInstance(ctx context.Context, id, lockToken string) error {
	s.locks.abandon(id, lockToken)
	return nil
}

// NextVisibleAt returns the earliest time after now at which there may be
// new work: a message or a retried activity task becomes visible, or the
// lock of an instance or the lease of an activity task expires. It returns
// false when there is no such time. Each part is one lookup in an index,
// whatever the backlog, or none for the messages while the store knows
// that none is visible (first.go): workers
// call it every time they find no work.
func (s *Store) NextVisibleAt(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next sql.NullInt64
	first, err := s.firstVisibleAt(ctx)
	switch {
	case err != nil:
	case first == math.MaxInt64:
	case first > sqlstore.Nanos(now):
		next = sql.NullInt64{Int64: first, Valid: true}
	default:
		err = s.readers.QueryRowContext(ctx, `SELECT min(visible_at) FROM messages WHERE visible_at > ?`, sqlstore.Nanos(now)).Scan(&next)
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next visible message: %w", err)
	}
	var retry sql.NullInt64
	if err := s.readers.QueryRowContext(ctx, `SELECT min(visible_at) FROM activity_tasks WHERE visible_at > ?`, sqlstore.Nanos(now)).Scan(&retry); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next retried activity: %w", err)
	}
	if retry.Valid && (!next.Valid || retry.Int64 < next.Int64) {
		next = retry
	}
	for _, expiry := range []func(int64) (int64, bool){s.locks.next, s.leases.next} {
		if at, ok := expiry(sqlstore.Nanos(now)); ok && (!next.Valid || at < next.Int64) {
			next = sql.NullInt64{Int64: at, Valid: true}
		}
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return sqlstore.FromNanos(next.Int64), true, nil
}

// ReleaseAllLeases unlocks every instance and activity task.
func (s *Store) ReleaseAllLeases(ctx context.Context) error {
	s.locks.releaseAll()
	s.leases.releaseAll()
	return nil
}
