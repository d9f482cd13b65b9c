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
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// LockNextActivities leases, until now+lease, up to max of the activity
// tasks of the host's own queue ("") no worker holds (or whose lease has
// expired) and whose module skip does not name, first in the fair order
// (see writeTx.QueueActivities), counting the delivery in each one's
// Attempt. It returns none when there is none. The leases are in memory
// (locks.go): it reads on the read connections, and writes only to count
// deliveries not counted in advance (one write for them all).
func (s *Store) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	return s.lockActivities(ctx, "lock next activities", now, lease, max, store.TaskPoll{}, skip)
}

// LockQueuedActivities leases, as LockNextActivities does, the tasks of
// the task queue p.Queue whose name p.Names holds (any, if it holds
// none), for a worker outside the host.
func (s *Store) LockQueuedActivities(ctx context.Context, now time.Time, lease time.Duration, max int, p store.TaskPoll) ([]*store.ActivityWork, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("sqlite: lock queued activities: %w", err)
	}
	return s.lockActivities(ctx, "lock queued activities", now, lease, max, p, nil)
}

func (s *Store) lockActivities(ctx context.Context, what string, now time.Time, lease time.Duration, max int, p store.TaskPoll, skip []string) ([]*store.ActivityWork, error) {
	if max < 1 {
		return nil, fmt.Errorf("sqlite: %s: max is %d; it must be at least 1", what, max)
	}
	if err := s.writable(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	s.leases.fetching.Lock()
	defer s.leases.fetching.Unlock()
	ws, err := s.leaseSome(ctx, now, lease, max, p, skip)
	s.leases.fetchedTasks(ws)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return ws, nil
}

// tasksQuery selects the tasks of a queue to lease at or past a place in
// the fair order (its floor: floor.go), but those whose id is in a JSON
// list (held) and those waiting to be retried after now; leaseSome adds
// the conditions of the modules it passes over and the names it takes,
// and the fair order.
const tasksQuery = `
		SELECT ` + taskColumns + `
		FROM activity_tasks WHERE queue = ? AND (fair_rank, id) >= (?, ?) AND id NOT IN (SELECT value FROM json_each(?)) AND visible_at <= ?`

// waitingQuery reports whether a queue has a task between two places in
// the fair order (the first one in, the second out) that waits to be
// retried after now.
const waitingQuery = `SELECT EXISTS (SELECT 1 FROM activity_tasks
		WHERE queue = ? AND (fair_rank, id) >= (?, ?) AND (fair_rank, id) < (?, ?) AND visible_at > ?)`

// taskColumns are the columns of a task to lease, as scanTask reads them.
const taskColumns = `id, instance_id, execution_id, module_hash, schedule_id, name, input, attempt, counted_run, timeout_ms, queue, heartbeat_timeout_ms, heartbeat,
			retry, failures, last_failure, pending_token IS NOT NULL, fair_rank`

// leasedTask is a task leaseSome leased.
type leasedTask struct {
	w *store.ActivityWork
	// counted is what activityLeases.lease returned; run is the row's
	// counted_run.
	counted bool
	run     int64
	// rank is the task's fair rank.
	rank int64
}

func (s *Store) leaseSome(ctx context.Context, now time.Time, lease time.Duration, max int, p store.TaskPoll, skip []string) ([]*store.ActivityWork, error) {
	at := sqlstore.Nanos(now)
	view := s.leases.view(p.Queue, at)
	held, err := idList(view.held)
	if err != nil {
		return nil, err
	}
	query, args := tasksQuery, []any{p.Queue, view.floor.rank, view.floor.id, held, at}
	for _, c := range []struct {
		cond string
		list []string
	}{{" AND module_hash NOT IN (SELECT value FROM json_each(?))", skip}, {" AND name IN (SELECT value FROM json_each(?))", p.Names}} {
		if len(c.list) > 0 {
			list, err := idList(c.list)
			if err != nil {
				return nil, err
			}
			query, args = query+c.cond, append(args, list)
		}
	}
	query, args = query+" ORDER BY fair_rank, id LIMIT ?", append(args, max)
	rows, err := s.readers.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var leased, uncounted []*leasedTask
	var last *taskKey // the last task read
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			s.unleaseAll(leased)
			return nil, err
		}
		w := t.w
		last = &taskKey{t.rank, w.ID}
		var ok bool
		if ok, t.counted = s.leases.take(w.ID, t.rank, w.LockToken, at, sqlstore.Nanos(now.Add(store.LeaseFor(w, lease))), nil); !ok {
			continue // an expired lease a worker is completing
		}
		leased = append(leased, t)
		if !t.counted || t.run != s.run {
			uncounted = append(uncounted, t)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		s.unleaseAll(leased)
		return nil, err
	}
	if len(uncounted) > 0 {
		err := s.writeUnsynced(ctx, func(ctx context.Context, tx txConn) error {
			for _, t := range uncounted {
				if _, err := tx.ExecContext(ctx, `UPDATE activity_tasks SET attempt = attempt + 1 WHERE id = ?`, t.w.ID); err != nil {
					return fmt.Errorf("count the delivery of activity %d: %w", t.w.ID, err)
				}
			}
			return nil
		})
		if err != nil {
			s.unleaseAll(leased)
			return nil, err
		}
		for _, t := range uncounted {
			t.w.Attempt++
		}
	}
	if last != nil && len(skip) == 0 && len(p.Names) == 0 {
		// Every task read is held now, and every task passed over was held
		// but those waiting for a retry: with none of those, the floor
		// moves past the last task read.
		past := taskKey{last.rank, last.id + 1}
		if !s.waitingBetween(ctx, p.Queue, view.floor, past, at) {
			s.leases.advance(p.Queue, view, past)
		}
	}
	return works(leased), nil
}

// waitingBetween reports whether queue has a task from one place in the
// fair order up to another that waits to be retried after at (true when
// the read fails). Until a retry or an await has written a wait past at,
// none does, and it reads nothing: a fan-out's fetches, one for each
// worker that a task freed, spent a quarter of their time asking.
func (s *Store) waitingBetween(ctx context.Context, queue string, from, to taskKey, at int64) bool {
	if at >= s.leases.waitsUntil.Load() {
		return false
	}
	var waiting bool
	err := s.readers.QueryRowContext(ctx, waitingQuery, queue, from.rank, from.id, to.rank, to.id, at).Scan(&waiting)
	return err != nil || waiting
}

// scanTask reads a task's taskColumns, with a new lock token for its
// lease.
func scanTask(rows *sql.Rows) (*leasedTask, error) {
	t := &leasedTask{w: &store.ActivityWork{LockToken: sqlstore.NewToken()}}
	w := t.w
	var input, heartbeat []byte
	var timeoutMs, heartbeatMs int64
	var retry, lastFailure *string
	if err := rows.Scan(&w.ID, &w.InstanceID, &w.ExecutionID, &w.ModuleHash, &w.Task.ScheduleID, &w.Task.Name, &input, &w.Attempt, &t.run, &timeoutMs,
		&w.Task.Queue, &heartbeatMs, &heartbeat, &retry, &w.Failures, &lastFailure, &w.Unanswered, &t.rank); err != nil {
		return nil, err
	}
	w.Task.Input, w.Task.Timeout, w.Heartbeat = input, time.Duration(timeoutMs)*time.Millisecond, heartbeat
	w.Task.HeartbeatTimeout = time.Duration(heartbeatMs) * time.Millisecond
	w.Task.Retry, w.LastFailure = sqlstore.DecodeRetry(retry), sqlstore.DecodeFailure(lastFailure)
	return t, nil
}

// works returns the work of the tasks leased.
func works(leased []*leasedTask) []*store.ActivityWork {
	ws := make([]*store.ActivityWork, len(leased))
	for i, t := range leased {
		ws[i] = t.w
	}
	return ws
}

// ExtendLease extends w's lease to now+lease, in memory (locks.go). It
// returns an error wrapping store.ErrLeaseLost if w's lease no longer holds
// the task.
func (s *Store) ExtendLease(ctx context.Context, w *store.ActivityWork, now time.Time, lease time.Duration) error {
	if !s.leases.extend(w.ID, w.LockToken, sqlstore.Nanos(now.Add(lease))) {
		return sqlstore.LeaseLost("sqlite", "extend the lease of", w)
	}
	return nil
}

// Heartbeat extends w's lease to now+lease, in memory (locks.go), and
// keeps details (JSON, or nil to keep those there) for the task's next
// delivery, written without waiting for the disk to sync: a heartbeat
// lost in a crash leaves the one before it. It returns an error wrapping
// store.ErrLeaseLost if w's lease no longer holds the task.
func (s *Store) Heartbeat(ctx context.Context, w *store.ActivityWork, details json.RawMessage, now time.Time, lease time.Duration) error {
	if err := s.ExtendLease(ctx, w, now, lease); err != nil || details == nil {
		return err
	}
	err := s.writeUnsynced(ctx, func(ctx context.Context, tx txConn) error {
		_, err := tx.ExecContext(ctx, `UPDATE activity_tasks SET heartbeat = ? WHERE id = ?`, []byte(details), w.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: keep the heartbeat of activity %d: %w", w.ID, err)
	}
	return nil
}

// ActivityTasks describes up to max of the instance's activity tasks,
// oldest first; those whose lease (in memory) holds at now are running.
// A task completed whose result is kept for the next turn (results.go)
// is done, and left out.
func (s *Store) ActivityTasks(ctx context.Context, instanceID string, now time.Time, max int) ([]store.ActivityTaskInfo, error) {
	held, done := map[int64]bool{}, map[int64]bool{}
	for _, id := range s.leases.held(sqlstore.Nanos(now), false) {
		held[id] = true
	}
	for _, r := range s.results.of(instanceID) {
		done[r.task] = true // completed, its result kept for the next turn
	}
	rows, err := s.readers.QueryContext(ctx, `SELECT id, schedule_id, name, queue, attempt, heartbeat, enqueued_at,
		timeout_ms, failures, last_failure, visible_at FROM activity_tasks
		WHERE instance_id = ? ORDER BY id LIMIT ?`, instanceID, max)
	if err != nil {
		return nil, fmt.Errorf("sqlite: activity tasks of %q: %w", instanceID, err)
	}
	defer rows.Close()
	var out []store.ActivityTaskInfo
	for rows.Next() {
		var t store.ActivityTaskInfo
		var id, enqueued, timeout, visible int64
		var failures int
		var heartbeat []byte
		var failure *string
		if err := rows.Scan(&id, &t.ScheduleID, &t.Name, &t.Queue, &t.Attempt, &heartbeat, &enqueued, &timeout, &failures, &failure, &visible); err != nil {
			return nil, fmt.Errorf("sqlite: activity tasks of %q: %w", instanceID, err)
		}
		t.Timeout, t.LastFailure = time.Duration(timeout)*time.Millisecond, sqlstore.DecodeFailure(failure)
		t.Retrying(failures, sqlstore.FromNanos(visible), now)
		if done[id] {
			continue
		}
		t.Running, t.Heartbeat, t.EnqueuedAt = held[id], heartbeat, sqlstore.FromNanos(enqueued)
		if !t.Running {
			t.Attempt-- // the delivery a commit counts in advance has not happened
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// unleaseAll undoes the leases of tasks leaseSome hands out none of.
func (s *Store) unleaseAll(ts []*leasedTask) {
	for _, t := range ts {
		s.leases.undo(t.w.ID, t.w.LockToken, t.counted)
	}
}

// idList encodes ids as the JSON array statements read with json_each (the
// held tasks they pass over, the instances with results kept).
func idList[T int64 | string](ids []T) (string, error) {
	if len(ids) == 0 {
		return "[]", nil // json_each reads null as one row, a NULL id
	}
	b, err := json.Marshal(ids)
	return string(b), err
}

// RetryActivity lets go of a leased activity task to run again at
// visibleAt, counting the failed attempt, atomically. It returns an error
// wrapping store.ErrLeaseLost if w's lease no longer holds the task. Like
// a commit, it counts the next delivery in advance (locks.go), and it
// does not wait for the disk to sync.
func (s *Store) RetryActivity(ctx context.Context, w *store.ActivityWork, failure *engine.Failure, visibleAt time.Time) error {
	return s.submit(ctx, &writeOp{unsynced: true, done: make(chan error, 1),
		fn: func(ctx context.Context, tx txConn) error {
			if !s.leases.write(w.ID, w.LockToken) {
				return sqlstore.LeaseLost("sqlite", "retry", w)
			}
			s.leases.waitUntil(sqlstore.Nanos(visibleAt))
			res, err := tx.ExecContext(ctx, `UPDATE activity_tasks SET failures = failures + 1, last_failure = ?, visible_at = ?, attempt = 1, counted_run = ?, pending_token = NULL
				WHERE id = ?`, sqlstore.EncodeFailure(failure), sqlstore.Nanos(visibleAt), s.run, w.ID)
			var updated int64
			if err == nil {
				updated, err = res.RowsAffected()
			}
			if err != nil {
				return fmt.Errorf("sqlite: retry activity %d: %w", w.ID, err)
			}
			if updated == 0 {
				return sqlstore.LeaseLost("sqlite", "retry", w) // purged with its instance
			}
			return nil
		},
		after: func(err error) { s.leases.written(w.ID, w.LockToken, err == nil) },
	})
}

// AwaitCompletion lets go of a leased activity task to wait, until
// until, for CompleteFromOutside with secret, as RetryActivity lets one go
// (counting the next delivery in advance). It returns an error wrapping
// store.ErrLeaseLost if w's lease no longer holds the task.
func (s *Store) AwaitCompletion(ctx context.Context, w *store.ActivityWork, secret string, until time.Time) error {
	return s.submit(ctx, &writeOp{unsynced: true, done: make(chan error, 1),
		fn: func(ctx context.Context, tx txConn) error {
			if !s.leases.write(w.ID, w.LockToken) {
				return sqlstore.LeaseLost("sqlite", "await the completion of", w)
			}
			s.leases.waitUntil(sqlstore.Nanos(until))
			res, err := tx.ExecContext(ctx, `UPDATE activity_tasks SET pending_token = ?, visible_at = ?, attempt = 1, counted_run = ? WHERE id = ?`,
				secret, sqlstore.Nanos(until), s.run, w.ID)
			var updated int64
			if err == nil {
				updated, err = res.RowsAffected()
			}
			if err != nil {
				return fmt.Errorf("sqlite: await the completion of activity %d: %w", w.ID, err)
			}
			if updated == 0 {
				return sqlstore.LeaseLost("sqlite", "await the completion of", w) // purged with its instance
			}
			return nil
		},
		after: func(err error) { s.leases.written(w.ID, w.LockToken, err == nil) },
	})
}

// CompleteFromOutside removes the task id that waits with secret and
// enqueues its result as a message, written at once (without waiting for
// the disk to sync, as a result is).
func (s *Store) CompleteFromOutside(ctx context.Context, id int64, secret string, result engine.Event, now time.Time) error {
	return s.submit(ctx, &writeOp{unsynced: true, done: make(chan error, 1),
		fn: func(ctx context.Context, tx txConn) error {
			var instanceID string
			var execution int64
			err := tx.QueryRowContext(ctx, sqlstore.TakeAwaited, id, secret, sqlstore.Nanos(now)).Scan(&instanceID, &execution, &result.ScheduleID)
			if errors.Is(err, sql.ErrNoRows) {
				var waits bool
				var until int64
				err := tx.QueryRowContext(ctx, sqlstore.WhyNotAwaited, secret, id).Scan(&waits, &until)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("sqlite: complete activity %d from outside: %w", id, err)
				}
				return fmt.Errorf("sqlite: %w", sqlstore.NotAwaited(id, err == nil, waits, until, sqlstore.Nanos(now)))
			}
			if err != nil {
				return fmt.Errorf("sqlite: complete activity %d from outside: %w", id, err)
			}
			payload, err := json.Marshal(result)
			if err != nil {
				return fmt.Errorf("sqlite: complete activity %d from outside: encode %s: %w", id, result.Kind, err)
			}
			// The result goes to the execution that scheduled the task: if
			// that one has continued as new, to nobody.
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at)
				SELECT id, ?, ?, ? FROM instances WHERE id = ? AND execution_id = ?`, payload, sqlstore.VisibleNow, sqlstore.Nanos(now), instanceID, execution); err != nil {
				return fmt.Errorf("sqlite: complete activity %d from outside: %w", id, err)
			}
			s.first.changed(1)
			return nil
		},
	})
}

// CompleteActivity removes a leased activity task and enqueues its result
// for its instance at now, visible at once, atomically. It returns an error
// wrapping store.ErrLeaseLost if w's lease no longer holds the task. It
// keeps the result in memory for the instance's next turn (results.go)
// unless the result is large; then it writes it, without waiting for the
// disk to sync (see write.go).
func (s *Store) CompleteActivity(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time) error {
	if result.ScheduleID != w.Task.ScheduleID {
		return fmt.Errorf("sqlite: complete activity %d: the result names event %d, the task's event is %d", w.ID, result.ScheduleID, w.Task.ScheduleID)
	}
	payload, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("sqlite: complete activity %d: encode %s: %w", w.ID, result.Kind, err)
	}
	// Kept for the instance's next turn (results.go), as the message
	// would have read back.
	r := &pendingResult{task: w.ID, execution: w.ExecutionID, at: sqlstore.Nanos(now), size: len(payload)}
	if err := json.Unmarshal(payload, &r.event); err != nil {
		return fmt.Errorf("sqlite: complete activity %d: decode %s: %w", w.ID, result.Kind, err)
	}
	switch held, kept := s.leases.keep(w.ID, w.LockToken, func() bool { return s.results.add(w.InstanceID, r) }); {
	case !held:
		return sqlstore.LeaseLost("sqlite", "complete", w)
	case kept:
		return nil
	}
	// Too large to keep: written as a message at once.
	return s.submit(ctx, &writeOp{unsynced: true, done: make(chan error, 1),
		fn: func(ctx context.Context, tx txConn) error {
			if !s.leases.write(w.ID, w.LockToken) {
				return sqlstore.LeaseLost("sqlite", "complete", w)
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE id = ?`, w.ID)
			var deleted int64
			if err == nil {
				deleted, err = res.RowsAffected()
			}
			if err != nil {
				return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
			}
			if deleted == 0 {
				return sqlstore.LeaseLost("sqlite", "complete", w) // purged with its instance
			}
			// The result goes to the execution that scheduled the task: if
			// that one has continued as new, to nobody.
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at)
				SELECT id, ?, ?, ? FROM instances WHERE id = ? AND execution_id = ?`, payload, sqlstore.VisibleNow, sqlstore.Nanos(now), w.InstanceID, w.ExecutionID); err != nil {
				return fmt.Errorf("sqlite: complete activity %d: %w", w.ID, err)
			}
			s.first.changed(1)
			return nil
		},
		after: func(err error) { s.leases.written(w.ID, w.LockToken, err == nil) },
	})
}
