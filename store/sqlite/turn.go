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

// CommitTurn commits a turn and unlocks the instance, in one transaction:
// all of it or, on any error, none of it. It returns an error wrapping
// store.ErrLeaseLost if c.LockToken no longer holds the instance's lock.
// c.NewEvents must continue the execution's history without a gap.
//
// The lock is in memory (locks.go): the commit holds it until it is
// written, then lets it go, and counts the instance's next delivery in
// advance (attempt 1, counted_run this run's).
func (s *Store) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	return s.commitTurn(ctx, c, nil)
}

// commitTurn commits c, as CommitTurn does; queued, when not nil, gets
// the store's ids of the tasks c queues, in c.Activities' order, and the
// module they run on.
func (s *Store) commitTurn(ctx context.Context, c store.TurnCommit, queued *queuedTasks) error {
	// The events are encoded here, beside the writer, which every write
	// waits for.
	payloads, err := encodeEvents(c.NewEvents)
	if err == nil {
		err = s.writeThen(ctx, func(ctx context.Context, tx txConn) error {
			if queued != nil {
				*queued = queuedTasks{fetched: s.leases.fetched.Load()}
			}
			return sqlstore.CommitTurn(ctx, commitTx{s.writeTx(tx), c.LockToken, c.NewEvents, payloads, queued}, c)
		}, func(err error) {
			if err == nil {
				s.forgetResults(c.InstanceID, resultTasks(c.Consumed))
			}
			s.locks.written(c.InstanceID, c.LockToken, err == nil)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: commit turn of %q: %w", c.InstanceID, err)
	}
	return nil
}

// commitTx is the statements of a turn's commit, by the holder of token,
// whose new events are encoded as payloads.
type commitTx struct {
	writeTx
	token    string
	events   []engine.Event
	payloads [][]byte
	// queued, when not nil, is told of the tasks the commit queues.
	queued *queuedTasks
}

// queuedTasks are the tasks a commit queued: their ids and fair ranks, in
// the order of its activities, and the module they run on; fetched is the
// count of fetches ended (activityLeases.fetched) before it was written.
type queuedTasks struct {
	ids, ranks []int64
	module     string
	fetched    uint64
}

// QueueActivities queues the commit's tasks, as writeTx.QueueActivities
// does, and tells t.queued of them.
func (t commitTx) QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	var record func(task, rank int64)
	if t.queued != nil {
		t.queued.module = moduleHash
		record = func(task, rank int64) {
			t.queued.ids, t.queued.ranks = append(t.queued.ids, task), append(t.queued.ranks, rank)
		}
	}
	return t.queueActivities(ctx, id, execution, moduleHash, tasks, now, record)
}

// AppendHistory appends the commit's new events, encoded already, to an
// execution's history.
func (t commitTx) AppendHistory(ctx context.Context, id string, execution int64, events []engine.Event) error {
	if len(events) == 0 || len(t.events) == 0 || &events[0] != &t.events[0] {
		return t.writeTx.AppendHistory(ctx, id, execution, events)
	}
	return t.insertHistory(ctx, id, execution, events, t.payloads)
}

// Locked reads the instance and, if the commit's token holds its lock,
// holds the lock until the commit is written (instanceLocks.commit).
func (t commitTx) Locked(ctx context.Context, id string) (sqlstore.Locked, error) {
	var l sqlstore.Locked
	var parent sql.NullString
	var schedule sql.NullInt64
	err := t.tx.QueryRowContext(ctx, `
		SELECT execution_id, last_event_id, module_hash, parent_id, parent_schedule_id
		FROM instances WHERE id = ?`, id).
		Scan(&l.Execution, &l.LastEventID, &l.ModuleHash, &parent, &schedule)
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	if err == nil && t.s.locks.write(id, t.token) {
		l.Token = &t.token
	}
	if parent.Valid {
		l.Parent = &parent.String
	}
	if schedule.Valid {
		l.ParentSchedule = &schedule.Int64
	}
	return l, err
}

func (t writeTx) Consume(ctx context.Context, id string, messages []int64) error {
	for _, m := range messages {
		// A negative id is an activity result kept in memory
		// (results.go): its task goes.
		statement := `DELETE FROM messages WHERE id = ? AND instance_id = ?`
		if m < 0 {
			m, statement = -m, `DELETE FROM activity_tasks WHERE id = ? AND instance_id = ?`
		} else {
			t.s.first.changed(1)
		}
		if _, err := t.tx.ExecContext(ctx, statement, m, id); err != nil {
			return fmt.Errorf("consume message %d: %w", m, err)
		}
	}
	return nil
}

// AppendHistory appends events to an execution's history.
func (t writeTx) AppendHistory(ctx context.Context, id string, execution int64, events []engine.Event) error {
	payloads, err := encodeEvents(events)
	if err != nil {
		return err
	}
	return t.insertHistory(ctx, id, execution, events, payloads)
}

// insertHistory inserts events, encoded as payloads, into an execution's
// history.
func (t writeTx) insertHistory(ctx context.Context, id string, execution int64, events []engine.Event, payloads [][]byte) error {
	for i, ev := range events {
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO history (instance_id, execution_id, event_id, payload) VALUES (?, ?, ?, ?)`,
			id, execution, ev.ID, payloads[i]); err != nil {
			return fmt.Errorf("event %d: %w", ev.ID, err)
		}
	}
	return nil
}

// encodeEvents encodes events as history stores them.
func encodeEvents(events []engine.Event) ([][]byte, error) {
	payloads := make([][]byte, len(events))
	for i, ev := range events {
		var err error
		if payloads[i], err = json.Marshal(ev); err != nil {
			return nil, fmt.Errorf("encode event %d: %w", ev.ID, err)
		}
	}
	return payloads, nil
}

// QueueActivities queues the tasks in the fair order
// store.Store.LockNextActivities describes, per task queue: the instance's
// tasks on a queue take the ranks that follow both its own last one there
// and the queue's first waiting task's, one each, and workers take tasks
// by rank.
func (t writeTx) QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	return t.queueActivities(ctx, id, execution, moduleHash, tasks, now, nil)
}

// queueActivities queues tasks as QueueActivities says, and tells record,
// when not nil, the id and rank of each task it queued, in order. Its
// write's commit resets the fetches' floors (floor.go).
func (t writeTx) queueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time, record func(task, rank int64)) error {
	if len(tasks) == 0 {
		return nil
	}
	t.s.leases.queued.Store(true)
	tx := t.tx
	held, err := idList(t.s.leases.held(sqlstore.Nanos(now), false))
	if err != nil {
		return err
	}
	next := map[string]int64{} // by queue, the rank of the next task
	for _, a := range tasks {
		rank, ok := next[a.Queue]
		if !ok {
			var first, last sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT
					(SELECT fair_rank FROM activity_tasks WHERE queue = ?3 AND id NOT IN (SELECT value FROM json_each(?1)) ORDER BY fair_rank, id LIMIT 1),
					(SELECT max(fair_rank) FROM activity_tasks WHERE instance_id = ?2 AND queue = ?3)`, held, id, a.Queue).Scan(&first, &last); err != nil {
				return fmt.Errorf("activities: the queue's first rank and the instance's last: %w", err)
			}
			rank = first.Int64
			if last.Valid {
				rank = max(rank, last.Int64+1)
			}
		}
		next[a.Queue] = rank + 1
		res, err := tx.ExecContext(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at, fair_rank, timeout_ms,
				attempt, counted_run, queue, heartbeat_timeout_ms, retry)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
			id, execution, moduleHash, a.ScheduleID, a.Name, sqlstore.NullIfEmpty(a.Input), sqlstore.Nanos(now), rank, a.Timeout.Milliseconds(), t.s.run,
			a.Queue, a.HeartbeatTimeout.Milliseconds(), sqlstore.EncodeRetry(a.Retry))
		if err != nil {
			return fmt.Errorf("activity %d: %w", a.ScheduleID, err)
		}
		if record != nil {
			task, err := res.LastInsertId()
			if err != nil {
				return fmt.Errorf("activity %d: its id: %w", a.ScheduleID, err)
			}
			record(task, rank)
		}
	}
	return nil
}
