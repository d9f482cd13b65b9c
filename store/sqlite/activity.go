package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// LockNextActivities leases, until now+lease, up to max of the activity
// tasks no worker holds (or whose lease has expired) and whose module skip
// does not name, first in the fair order (see writeTx.QueueActivities),
// counting the delivery in each one's Attempt. It returns none when there
// is none. The leases are in memory (locks.go): it reads on the read
// connections, and writes only to count deliveries not counted in advance
// (one write for them all).
func (s *Store) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	if max < 1 {
		return nil, fmt.Errorf("sqlite: lock next activities: max is %d; it must be at least 1", max)
	}
	s.leases.fetching.Lock()
	defer s.leases.fetching.Unlock()
	ws, err := s.leaseSome(ctx, now, lease, max, skip)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock next activities: %w", err)
	}
	return ws, nil
}

// nextTasks selects the tasks to lease, in the fair order, but those whose
// id is in the JSON list ?1 (leased) and those waiting to be retried after
// ?3 (now); nextTasksSkipping also passes over those of the modules in the
// JSON list ?4.
var (
	nextTasks         = fmt.Sprintf(tasksQuery, "")
	nextTasksSkipping = fmt.Sprintf(tasksQuery, " AND module_hash NOT IN (SELECT value FROM json_each(?4))")
)

const tasksQuery = `
		SELECT id, instance_id, execution_id, module_hash, schedule_id, name, input, attempt, counted_run, timeout_ms, retry, failures, last_failure
		FROM activity_tasks WHERE id NOT IN (SELECT value FROM json_each(?1)) AND visible_at <= ?3%s ORDER BY fair_rank, id LIMIT ?2`

// leasedTask is a task leaseSome leased.
type leasedTask struct {
	w *store.ActivityWork
	// counted is what activityLeases.lease returned; run is the row's
	// counted_run.
	counted bool
	run     int64
}

func (s *Store) leaseSome(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	at, until := sqlstore.Nanos(now), sqlstore.Nanos(now.Add(lease))
	held, err := idList(s.leases.held(at, false))
	if err != nil {
		return nil, err
	}
	query, args := nextTasks, []any{held, max, at}
	if len(skip) > 0 {
		skipped, err := idList(skip)
		if err != nil {
			return nil, err
		}
		query, args = nextTasksSkipping, []any{held, max, at, skipped}
	}
	rows, err := s.readers.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var leased, uncounted []*leasedTask
	for rows.Next() {
		t := &leasedTask{w: &store.ActivityWork{LockToken: sqlstore.NewToken()}}
		w := t.w
		var input []byte
		var timeoutMs int64
		var retry, lastFailure *string
		if err := rows.Scan(&w.ID, &w.InstanceID, &w.ExecutionID, &w.ModuleHash, &w.Task.ScheduleID, &w.Task.Name, &input, &w.Attempt, &t.run, &timeoutMs,
			&retry, &w.Failures, &lastFailure); err != nil {
			rows.Close()
			s.unleaseAll(leased)
			return nil, err
		}
		w.Task.Input, w.Task.Timeout = input, time.Duration(timeoutMs)*time.Millisecond
		w.Task.Retry, w.LastFailure = sqlstore.DecodeRetry(retry), sqlstore.DecodeFailure(lastFailure)
		var ok bool
		if ok, t.counted = s.leases.take(w.ID, w.LockToken, at, until, nil); !ok {
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
	ws := make([]*store.ActivityWork, len(leased))
	for i, t := range leased {
		ws[i] = t.w
	}
	return ws, nil
}

// ExtendLease extends w's lease to now+lease, in memory (locks.go). It
// returns an error wrapping store.ErrLeaseLost if w's lease no longer holds
// the task.
func (s *Store) ExtendLease(ctx context.Context, w *store.ActivityWork, now time.Time, lease time.Duration) error {
	if !s.leases.extend(w.ID, w.LockToken, sqlstore.Nanos(now.Add(lease))) {
		return fmt.Errorf("sqlite: extend the lease of activity %d (%q of %q): %w: it was handed to another worker or completed", w.ID, w.Task.Name, w.InstanceID, store.ErrLeaseLost)
	}
	return nil
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
	lost := fmt.Errorf("sqlite: retry activity %d (%q of %q): %w: it was handed to another worker or completed", w.ID, w.Task.Name, w.InstanceID, store.ErrLeaseLost)
	return s.submit(ctx, &writeOp{unsynced: true, done: make(chan error, 1),
		fn: func(ctx context.Context, tx txConn) error {
			if !s.leases.write(w.ID, w.LockToken) {
				return lost
			}
			res, err := tx.ExecContext(ctx, `UPDATE activity_tasks SET failures = failures + 1, last_failure = ?, visible_at = ?, attempt = 1, counted_run = ?
				WHERE id = ?`, sqlstore.EncodeFailure(failure), sqlstore.Nanos(visibleAt), s.run, w.ID)
			var updated int64
			if err == nil {
				updated, err = res.RowsAffected()
			}
			if err != nil {
				return fmt.Errorf("sqlite: retry activity %d: %w", w.ID, err)
			}
			if updated == 0 {
				return lost // purged with its instance
			}
			return nil
		},
		after: func(err error) { s.leases.written(w.ID, w.LockToken, err == nil) },
	})
}

// CompleteActivity removes a leased activity task and enqueues its result
// for its instance at now, visible at once, atomically. It returns an error
// wrapping store.ErrLeaseLost if w's lease no longer holds the task. It
// keeps the result in memory for the instance's next turn (results.go)
// unless the result is large; then it writes it, without waiting for the
// disk to sync (see write.go).
func (s *Store) CompleteActivity(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time) error {
	lost := fmt.Errorf("sqlite: complete activity %d (%q of %q): %w: it was handed to another worker or completed", w.ID, w.Task.Name, w.InstanceID, store.ErrLeaseLost)
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
		return lost
	case kept:
		return nil
	}
	// Too large to keep: written as a message at once.
	return s.submit(ctx, &writeOp{unsynced: true, done: make(chan error, 1),
		fn: func(ctx context.Context, tx txConn) error {
			if !s.leases.write(w.ID, w.LockToken) {
				return lost
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
				return lost // purged with its instance
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
