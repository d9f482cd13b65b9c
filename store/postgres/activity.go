package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// LockNextActivities leases, until now+lease (store.LeaseFor), up to max
// of the activity tasks of the hosts' own queue ("") that are not leased
// (or whose lease has expired) and whose module skip does not name, first
// in the fair order (see writeTx.QueueActivities), counting the delivery
// in each one's Attempt. Hosts that lease at once skip the rows another is
// leasing (FOR UPDATE SKIP LOCKED).
func (s *Store) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	return s.lockActivities(ctx, "lock next activities", now, lease, max, store.TaskPoll{}, skip)
}

// LockQueuedActivities leases, as LockNextActivities does, the tasks of
// the task queue p.Queue whose name p.Names holds (any, if it holds
// none), for a worker outside the hosts.
func (s *Store) LockQueuedActivities(ctx context.Context, now time.Time, lease time.Duration, max int, p store.TaskPoll) ([]*store.ActivityWork, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("postgres: lock queued activities: %w", err)
	}
	return s.lockActivities(ctx, "lock queued activities", now, lease, max, p, nil)
}

func (s *Store) lockActivities(ctx context.Context, what string, now time.Time, lease time.Duration, max int, p store.TaskPoll, skip []string) ([]*store.ActivityWork, error) {
	if max < 1 {
		return nil, fmt.Errorf("postgres: %s: max is %d; it must be at least 1", what, max)
	}
	var ws []*store.ActivityWork
	err := s.writeUnsynced(ctx, func(tx *pipeTx) error {
		token := sqlstore.NewToken()
		rows, err := tx.Query(ctx, `
			UPDATE activity_tasks SET `+leaseColumns+`
			WHERE id IN (`+nextTasks+`)
			RETURNING `+leasedColumns,
			token, s.opts.HostID, sqlstore.Nanos(now.Add(lease)), sqlstore.Nanos(now), max, array(skip), p.Queue, array(p.Names))
		ws, err = scanLeased(rows, err)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return ws, nil
}

// A lease of activity tasks: leaseColumns set it (with $1 the lease's
// token, $2 the host, $3 its end and $4 now), leasedColumns are what
// scanLeased reads of each task leased.
const (
	leaseColumns = `lock_token = $1 || '.' || id, lock_owner = $2, attempt = attempt + 1,
		locked_until = CASE WHEN heartbeat_timeout_ms > 0 THEN $4 + heartbeat_timeout_ms * 1000000 ELSE $3 END`
	leasedColumns = `id, instance_id, execution_id, module_hash, schedule_id, name, input, attempt, lock_token, timeout_ms, queue, heartbeat_timeout_ms, heartbeat,
		retry, failures, last_failure, pending_token IS NOT NULL`
)

// scanLeased reads the tasks a lease's statement returned (leasedColumns),
// ordered by id.
func scanLeased(rows pgx.Rows, err error) ([]*store.ActivityWork, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ws []*store.ActivityWork
	for rows.Next() {
		w := &store.ActivityWork{}
		var input, heartbeat []byte
		var timeoutMs, heartbeatMs int64
		var retry, lastFailure *string
		if err := rows.Scan(&w.ID, &w.InstanceID, &w.ExecutionID, &w.ModuleHash, &w.Task.ScheduleID, &w.Task.Name, &input, &w.Attempt, &w.LockToken, &timeoutMs,
			&w.Task.Queue, &heartbeatMs, &heartbeat, &retry, &w.Failures, &lastFailure, &w.Unanswered); err != nil {
			return nil, err
		}
		w.Task.Input, w.Task.Timeout, w.Heartbeat = input, time.Duration(timeoutMs)*time.Millisecond, heartbeat
		w.Task.HeartbeatTimeout = time.Duration(heartbeatMs) * time.Millisecond
		w.Task.Retry, w.LastFailure = sqlstore.DecodeRetry(retry), sqlstore.DecodeFailure(lastFailure)
		ws = append(ws, w)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(ws, func(a, b *store.ActivityWork) int { return cmp.Compare(a.ID, b.ID) })
	return ws, nil
}

// nextTasks selects the tasks a lease takes, FOR UPDATE SKIP LOCKED: those
// of the task queue $7 that are neither leased nor waiting at $4, of no
// module $6 names and of a name $8 holds (any, if it holds none), the
// first $5 in the fair order. It walks activity_tasks_fair in that order
// and stops at $5, past the tasks leased and the deleted ones' entries,
// however many the queue holds (TestQueuePlansWalkIndexes).
const nextTasks = `SELECT id FROM activity_tasks WHERE queue = $7 AND locked_until <= $4 AND visible_at <= $4 AND NOT (module_hash = ANY($6))
	AND (cardinality($8::text[]) = 0 OR name = ANY($8))
	ORDER BY fair_rank, id LIMIT $5 FOR UPDATE SKIP LOCKED`

// ExtendLease extends w's lease to now+lease: Heartbeat without details.
func (s *Store) ExtendLease(ctx context.Context, w *store.ActivityWork, now time.Time, lease time.Duration) error {
	return s.Heartbeat(ctx, w, nil, now, lease)
}

// Heartbeat extends w's lease to now+lease and keeps details (nil keeps
// those there) for the task's next delivery. It returns an error wrapping
// store.ErrLeaseLost if w's lease no longer holds the task. Like a lease,
// it does not wait for the WAL flush.
func (s *Store) Heartbeat(ctx context.Context, w *store.ActivityWork, details json.RawMessage, now time.Time, lease time.Duration) error {
	return s.writeUnsynced(ctx, func(tx *pipeTx) error {
		tag, err := tx.Exec(ctx, `UPDATE activity_tasks SET locked_until = greatest(locked_until, $1), heartbeat = coalesce($4, heartbeat) WHERE id = $2 AND lock_token = $3`,
			sqlstore.Nanos(now.Add(lease)), w.ID, w.LockToken, []byte(details))
		if err != nil {
			return fmt.Errorf("postgres: extend the lease of activity %d: %w", w.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return sqlstore.LeaseLost("postgres", "extend the lease of", w)
		}
		return nil
	})
}

// ActivityTasks describes up to max of the instance's activity tasks,
// oldest first; those whose lease holds at now are running.
func (s *Store) ActivityTasks(ctx context.Context, instanceID string, now time.Time, max int) ([]store.ActivityTaskInfo, error) {
	var out []store.ActivityTaskInfo
	err := s.read(ctx, func(r db) error {
		out = nil
		rows, err := r.Query(ctx, `SELECT schedule_id, name, queue, attempt, heartbeat, enqueued_at, locked_until > $2,
			timeout_ms, failures, last_failure, visible_at FROM activity_tasks
			WHERE instance_id = $1 ORDER BY id LIMIT $3`, instanceID, sqlstore.Nanos(now), max)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t store.ActivityTaskInfo
			var enqueued, timeout, visible int64
			var failures int
			var heartbeat []byte
			var failure *string
			if err := rows.Scan(&t.ScheduleID, &t.Name, &t.Queue, &t.Attempt, &heartbeat, &enqueued, &t.Running, &timeout, &failures, &failure, &visible); err != nil {
				return err
			}
			t.Timeout, t.LastFailure = time.Duration(timeout)*time.Millisecond, sqlstore.DecodeFailure(failure)
			t.Retrying(failures, sqlstore.FromNanos(visible), now)
			t.Heartbeat, t.EnqueuedAt = heartbeat, sqlstore.FromNanos(enqueued)
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: activity tasks of %q: %w", instanceID, err)
	}
	return out, nil
}

// RetryActivity lets go of a leased activity task to run again at
// visibleAt, counting the failed attempt, atomically. It returns an error
// wrapping store.ErrLeaseLost if w's lease no longer holds the task. Like a
// lease, it does not wait for the WAL flush.
func (s *Store) RetryActivity(ctx context.Context, w *store.ActivityWork, failure *engine.Failure, visibleAt time.Time) error {
	return s.writeAnnouncing(ctx, taskAnnounce(w), func(tx *pipeTx) error {
		tag, err := tx.Exec(ctx, `UPDATE activity_tasks SET failures = failures + 1, last_failure = $1, visible_at = $2, attempt = 0, pending_token = NULL,
			lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE id = $3 AND lock_token = $4`,
			sqlstore.EncodeFailure(failure), sqlstore.Nanos(visibleAt), w.ID, w.LockToken)
		if err != nil {
			return fmt.Errorf("postgres: retry activity %d: %w", w.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return sqlstore.LeaseLost("postgres", "retry", w)
		}
		return nil
	})
}

// AwaitCompletion lets go of a leased activity task to wait, until
// until, for CompleteFromOutside with secret. It returns an error wrapping
// store.ErrLeaseLost if w's lease no longer holds the task. Like a lease,
// it does not wait for the WAL flush.
func (s *Store) AwaitCompletion(ctx context.Context, w *store.ActivityWork, secret string, until time.Time) error {
	return s.writeAnnouncing(ctx, taskAnnounce(w), func(tx *pipeTx) error {
		tag, err := tx.Exec(ctx, `UPDATE activity_tasks SET pending_token = $1, visible_at = $2, attempt = 0,
			lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE id = $3 AND lock_token = $4`,
			secret, sqlstore.Nanos(until), w.ID, w.LockToken)
		if err != nil {
			return fmt.Errorf("postgres: await the completion of activity %d: %w", w.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return sqlstore.LeaseLost("postgres", "await the completion of", w)
		}
		return nil
	})
}

// CompleteFromOutside removes the task id that waits with secret and
// enqueues its result for its instance at now, visible at once,
// atomically. Like a result, it does not wait for the WAL flush.
func (s *Store) CompleteFromOutside(ctx context.Context, id int64, secret string, result engine.Event, now time.Time) error {
	return s.writeAnnouncing(ctx, announceTurns, func(tx *pipeTx) error {
		var instanceID string
		var execution int64
		err := tx.QueryRow(ctx, dialect.Rebind(sqlstore.TakeAwaited), id, secret, sqlstore.Nanos(now)).Scan(&instanceID, &execution, &result.ScheduleID)
		if errors.Is(err, pgx.ErrNoRows) {
			var waits bool
			var until int64
			err := tx.QueryRow(ctx, dialect.Rebind(sqlstore.WhyNotAwaited), secret, id).Scan(&waits, &until)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("postgres: complete activity %d from outside: %w", id, err)
			}
			return fmt.Errorf("postgres: %w", sqlstore.NotAwaited(id, err == nil, waits, until, sqlstore.Nanos(now)))
		}
		if err != nil {
			return fmt.Errorf("postgres: complete activity %d from outside: %w", id, err)
		}
		payload, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("postgres: complete activity %d from outside: encode %s: %w", id, result.Kind, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at)
			SELECT id, $1, $2, $3, $4 FROM instances WHERE id = $5 AND execution_id = $6`,
			string(result.Kind), payload, sqlstore.VisibleNow, sqlstore.Nanos(now), instanceID, execution); err != nil {
			return fmt.Errorf("postgres: complete activity %d from outside: %w", id, err)
		}
		return nil
	})
}

// CompleteActivity removes a leased activity task and enqueues its result
// for its instance at now, visible at once, atomically. It returns an error
// wrapping store.ErrLeaseLost if w's lease no longer holds the task.
func (s *Store) CompleteActivity(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time) error {
	payload, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("postgres: complete activity %d: encode %s: %w", w.ID, result.Kind, err)
	}
	return s.writeAnnouncing(ctx, announceTurns, func(tx *pipeTx) error { return completeIn(ctx, tx, w, result, payload, now) })
}

// completeIn removes the leased task w and enqueues its result (payload,
// result encoded) for the execution that scheduled it, in tx.
func completeIn(ctx context.Context, tx *pipeTx, w *store.ActivityWork, result engine.Event, payload []byte, now time.Time) error {
	if err := takeTask(tx, w, result); err != nil {
		return err
	}
	return enqueueResult(tx, w, result, payload, now)
}

// takeTask removes the leased task w, whose outcome is result, in tx.
func takeTask(tx *pipeTx, w *store.ActivityWork, result engine.Event) error {
	// The task's row is checked once it is deleted, before the commit
	// (SendCheck); what the transaction wrote beside it is undone if it
	// fails.
	return tx.SendCheck(func(rows pgx.Rows) error {
		schedule, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int64])
		if errors.Is(err, pgx.ErrNoRows) {
			return sqlstore.LeaseLost("postgres", "complete", w)
		}
		if err != nil {
			return fmt.Errorf("postgres: complete activity %d: %w", w.ID, err)
		}
		if result.ScheduleID != schedule {
			return fmt.Errorf("postgres: complete activity %d: the result names event %d, the task's event is %d", w.ID, result.ScheduleID, schedule)
		}
		return nil
	}, `DELETE FROM activity_tasks WHERE id = $1 AND lock_token = $2 RETURNING schedule_id`, w.ID, w.LockToken)
}

// enqueueResult enqueues result, the outcome of the task w (payload, it
// encoded), at now, in tx. It goes to the execution that scheduled the
// task (the task's, which w names): if that one has ended, to nobody.
func enqueueResult(tx *pipeTx, w *store.ActivityWork, result engine.Event, payload []byte, now time.Time) error {
	return tx.Send(`INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at)
		SELECT id, $1, $2, $3, $4 FROM instances WHERE id = $5 AND execution_id = $6`,
		string(result.Kind), payload, sqlstore.VisibleNow, sqlstore.Nanos(now), w.InstanceID, w.ExecutionID)
}
