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

// CommitTurn commits a turn and unlocks the instance, in one transaction:
// all of it or, on any error, none of it. It returns an error wrapping
// store.ErrLeaseLost if c.LockToken no longer holds the instance's lock:
// the instance's row is locked (FOR UPDATE) while the token is checked and
// the turn written, so a host whose lock expired and was taken over cannot
// write a turn another host has written (fencing: each lock has its own
// token).
func (s *Store) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	_, err := s.CommitTurnLeasing(ctx, c, 0, 0)
	return err
}

// Locked locks the instance's row (FOR UPDATE) for the rest of the turn,
// unless the transaction has locked it already (writeTx.locked).
func (t writeTx) Locked(ctx context.Context, id string) (sqlstore.Locked, error) {
	if t.locked != nil {
		if t.parent != nil {
			*t.parent = t.locked.Parent != nil
		}
		return *t.locked, nil
	}
	var l sqlstore.Locked
	err := t.tx.QueryRow(ctx, `
		SELECT lock_token, execution_id, last_event_id, module_hash, parent_id, parent_schedule_id
		FROM instances WHERE id = $1 FOR UPDATE`, id).
		Scan(&l.Token, &l.Execution, &l.LastEventID, &l.ModuleHash, &l.Parent, &l.ParentSchedule)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	if t.parent != nil {
		*t.parent = l.Parent != nil
	}
	return l, err
}

func (t writeTx) InsertChild(ctx context.Context, n store.NewInstance, parent string, schedule *int64) error {
	// A child is work of its parent, which has begun. A savepoint keeps
	// the turn's transaction when the insert fails.
	return t.tx.savepoint(ctx, func(sp *pipeTx) error { return newWriteTx(sp).Tx.InsertChild(ctx, n, parent, schedule) })
}

// consumeQuery deletes the messages $2 of instance $1, each looked up by
// its key (TestQueuePlansWalkIndexes).
const consumeQuery = `DELETE FROM messages WHERE instance_id = $1 AND id = ANY($2)`

func (t writeTx) Consume(ctx context.Context, id string, messages []int64) error {
	return t.tx.Send(consumeQuery, id, messages)
}

// AppendHistory appends events to an execution's history, in one round
// trip.
func (t writeTx) AppendHistory(ctx context.Context, id string, execution int64, events []engine.Event) error {
	if len(events) == 0 {
		return nil
	}
	ids := make([]int64, len(events))
	kinds := make([]string, len(events))
	payloads := make([][]byte, len(events))
	for i, ev := range events {
		payload, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encode event %d: %w", ev.ID, err)
		}
		ids[i], kinds[i], payloads[i] = ev.ID, string(ev.Kind), payload
	}
	return t.tx.Send(`INSERT INTO history (instance_id, execution_id, event_id, kind, payload)
		SELECT $1, $2, e.id, e.kind, e.payload FROM unnest($3::bigint[], $4::text[], $5::bytea[]) AS e(id, kind, payload)`,
		id, execution, ids, kinds, payloads)
}

// rankQuery is the rank of the next task instance $2 queues on queue $3 at
// $1 (rankOf).
var rankQuery = `SELECT ` + rankOf("$1", "$2", "$3")

// rankOf is the rank of the next task instance queues on queue at now:
// the larger of the queue's first waiting task's and the one after the
// instance's last task's there. Each is the first entry of an index walk
// (TestQueuePlansWalkIndexes); the last task's is a walk backwards, where
// max() let the planner read all the instance's tasks.
func rankOf(now, instance, queue string) string {
	return `greatest(
	coalesce((SELECT fair_rank FROM activity_tasks WHERE queue = ` + queue + ` AND locked_until <= ` + now + ` ORDER BY fair_rank, id LIMIT 1), 0),
	coalesce((SELECT fair_rank + 1 FROM activity_tasks WHERE instance_id = ` + instance + ` AND queue = ` + queue + ` ORDER BY fair_rank DESC LIMIT 1), 0))`
}

// queueQuery queues tasks of instance $1's execution $2 on module $3 at
// $4, all on queue $5, one a row of the arrays $6 to $11, in one
// statement: they take the ranks that follow the one rankOf gives the
// queue, in their order. rankOf's walks are the statement's InitPlans,
// each run once whatever the number of tasks. The tasks of the schedules
// $12 it inserts leased, as leaseColumns leases them (with $13 the
// lease's token, $14 the host and $15 its end); each task's id is taken
// before its row is inserted, for its lease's token.
var queueQuery = `
		INSERT INTO activity_tasks (id, instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at, fair_rank, timeout_ms,
			queue, heartbeat_timeout_ms, retry, lock_token, lock_owner, locked_until, attempt)
		SELECT t.id, $1, $2, $3, t.schedule_id, t.name, t.input, $4, ` + rankOf("$4", "$1", "$5") + ` + t.n - 1, t.timeout_ms,
			$5, t.heartbeat_timeout_ms, t.retry,
			CASE WHEN t.leased THEN $13::text || '.' || t.id END, CASE WHEN t.leased THEN $14::text END,
			CASE WHEN NOT t.leased THEN 0 WHEN t.heartbeat_timeout_ms > 0 THEN $4 + t.heartbeat_timeout_ms * 1000000 ELSE $15::bigint END,
			CASE WHEN t.leased THEN 1 ELSE 0 END
		FROM (SELECT nextval('activity_tasks_id_seq') AS id, u.*, u.schedule_id = ANY($12) AS leased
			FROM unnest($6::bigint[], $7::text[], $8::bytea[], $9::bigint[], $10::bigint[], $11::text[]) WITH ORDINALITY
				AS u(schedule_id, name, input, timeout_ms, heartbeat_timeout_ms, retry, n)) t`

// queueLeasingQuery is queueQuery, returning the tasks it leased
// (leasedColumns). Only a run that leases asks for them: the rows an
// insert returns are kept until the statement ends, every one of a
// fan-out's.
var queueLeasingQuery = `
	WITH queued AS (` + queueQuery + `
		RETURNING *)
	SELECT ` + leasedColumns + ` FROM queued WHERE lock_token IS NOT NULL`

// QueueActivities queues the tasks in the fair order
// store.Store.LockNextActivities describes, per task queue: the instance's
// tasks on a queue take the ranks that follow both its own last one there
// and the queue's first waiting task's, one each, and workers take tasks
// by rank. (Two hosts that queue at once may give tasks the same rank; the
// id orders them.) Each run of tasks on one queue is one statement
// (queueQuery), whose answer nothing reads unless it leases (t.lease,
// queueLeasingQuery): a
// later run on a queue ranks its tasks after the earlier run's, which its
// statement sees.
func (t writeTx) QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	for len(tasks) > 0 {
		n := 1
		for n < len(tasks) && tasks[n].Queue == tasks[0].Queue {
			n++
		}
		run := tasks[:n]
		tasks = tasks[n:]
		schedules, names, inputs := make([]int64, n), make([]string, n), make([][]byte, n)
		timeouts, heartbeats, retries := make([]int64, n), make([]int64, n), make([]*string, n)
		for i, a := range run {
			schedules[i], names[i] = a.ScheduleID, a.Name
			if len(a.Input) > 0 { // else NULL, as sqlstore.NullIfEmpty
				inputs[i] = a.Input
			}
			timeouts[i], heartbeats[i], retries[i] = a.Timeout.Milliseconds(), a.HeartbeatTimeout.Milliseconds(), sqlstore.EncodeRetry(a.Retry)
		}
		args := []any{id, execution, moduleHash, sqlstore.Nanos(now), run[0].Queue, schedules, names, inputs, timeouts, heartbeats, retries}
		l := t.lease
		if l == nil || run[0].Queue != "" {
			if err := t.tx.Send(queueQuery, append(args, []int64{}, "", "", 0)...); err != nil {
				return err
			}
			continue
		}
		err := t.tx.SendRows(func(rows pgx.Rows) error {
			ws, err := scanLeased(rows, nil)
			if err != nil {
				return fmt.Errorf("lease its activities: %w", err)
			}
			l.leased = append(l.leased, ws...)
			slices.SortFunc(l.leased, func(a, b *store.ActivityWork) int { return cmp.Compare(a.ID, b.ID) })
			return nil
		}, queueLeasingQuery, append(args, l.schedules, l.token, l.host, l.until)...)
		if err != nil {
			return err
		}
	}
	return nil
}

// taskLease is the lease a turn's commit gives the tasks it queues on the
// host's own queue (commitTurn): those of the schedules it names, with
// its token, for its host, until its end (Unix nanoseconds), as
// leaseColumns sets them. leased is the tasks leased, by id, read as the
// answers of their inserts come.
type taskLease struct {
	schedules   []int64
	token, host string
	until       int64
	leased      []*store.ActivityWork
}

// Handing a host the work it makes for itself (store.Handoff): each of
// these is what the plain calls in a row do, in one transaction, so that
// a hello (a start, two turns and an activity) costs two commits and a
// step of a sequence one, where each plain call is a commit of its own.
var _ store.Handoff = (*Store)(nil)

// CreateLocked creates the instance n, as CreateInstance does, and locks
// it for this host until n.Now+lease, in one transaction. The instance's
// row is inserted locked (createLocked) and its start message's id read
// back with the COMMIT, and its work item is what the transaction wrote:
// no update of the row, no read of its messages.
func (s *Store) CreateLocked(ctx context.Context, n store.NewInstance, lease time.Duration) (*store.WorkItem, error) {
	start := sqlstore.StartOf(n)
	payload, err := json.Marshal(start)
	if err != nil {
		return nil, fmt.Errorf("postgres: create instance %q: encode %s message: %w", n.ID, start.Kind, err)
	}
	var item *store.WorkItem
	err = s.write(ctx, func(tx *pipeTx) (err error) {
		item = &store.WorkItem{LockToken: sqlstore.NewToken()}
		wt := newWriteTx(tx)
		args := append(sqlstore.InstanceArgs(n, nil, nil), item.LockToken, s.opts.HostID, sqlstore.Nanos(n.Now.Add(lease)))
		item.Instance, err = sqlstore.ScanInstance(tx.QueryRow(ctx, createLocked, args...), &item.HistoryLen, &item.Attempt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return wt.NotInserted(ctx, n)
		case err != nil:
			return err
		}
		// As InsertInstance inserts it (sqlstore.Dialect.InsertStart).
		err = tx.SendRows(func(rows pgx.Rows) error {
			id, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int64])
			if err != nil {
				return fmt.Errorf("start message: %w", err)
			}
			item.Messages = []store.Message{sqlstore.Message(id, payload)}
			return nil
		}, dialect.InsertStart+` RETURNING id`, string(start.Kind), payload, sqlstore.Nanos(n.Now), n.ID, nil)
		if err != nil {
			return err
		}
		return wt.InsertAudit(ctx, n.Audit)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: create instance %q: %w", n.ID, err)
	}
	return item, nil
}

// CreateAndTurn creates the instance n and commits its first turn, the
// one next makes of the work item CreateLocked would return, in one
// transaction, as CommitTurnLeasing commits a turn. next runs before the
// transaction begins: nobody can take an instance not yet written, so
// the transaction locks nothing while the turn runs, and the commit
// trusts the lock of the turn's work item without reading the row it
// inserted. The start message the turn consumes is never written, and
// the instance's row is inserted as the turn leaves it (createTurned), so
// that the commit writes it once; a turn that leaves the start, or
// continues as new, inserts it as CreateInstance does, and the commit
// updates it.
func (s *Store) CreateAndTurn(ctx context.Context, n store.NewInstance, lease time.Duration,
	next func(*store.WorkItem) (*store.TurnCommit, int)) (bool, []*store.ActivityWork, error) {
	turn, max, consumed, err := sqlstore.FirstTurn(n, next)
	if turn == nil {
		return false, nil, err
	}
	created := consumed && turn.ContinueAsNew == nil && turn.Refused == nil
	var done *committed
	err = s.write(ctx, func(tx *pipeTx) error {
		wt := newWriteTx(tx)
		var err error
		if created {
			err = wt.insertTurned(ctx, n, *turn)
		} else {
			err = wt.InsertFirst(ctx, n, !consumed)
		}
		if err != nil {
			return err
		}
		// The instance as the insert wrote it: in execution 1, locked by
		// the turn's work item.
		done = &committed{c: *turn, locked: &sqlstore.Locked{Token: &turn.LockToken, Execution: 1, ModuleHash: n.ModuleHash}, created: created}
		return s.commitTurn(ctx, tx, done, lease, max)
	})
	if err != nil {
		return false, nil, fmt.Errorf("postgres: create instance %q with its first turn: %w", n.ID, err)
	}
	s.announce(done.announces()...)
	return true, done.leased(), nil
}

// createTurned inserts an instance (sqlstore.InstanceArgs, its status $3
// the turn's) as its first turn leaves it, as sqlstore.Tx.Finish would
// update it: updated at $9, with the result $10, the failure $11, the
// custom status $12 (NULL: none), the last event $13, the persistent
// events taken $14 and the waits $15 and $16.
var createTurned = insertInstance("$9", `, result, failure, custom_status, last_event_id, persistent_taken, waiting_on, waits`,
	`, $10, $11, coalesce($12, ''), $13, $14, $15, $16`)

// insertTurned inserts n as its first turn c leaves it (createTurned),
// with its audit record, for the commit of c in the same transaction,
// whose Finish then writes nothing (writeTx.created). It returns what
// InsertInstance returns when it inserts nothing.
func (t writeTx) insertTurned(ctx context.Context, n store.NewInstance, c store.TurnCommit) error {
	waitingOn, waits, err := sqlstore.FinishWaits(c)
	if err != nil {
		return err
	}
	args := append(sqlstore.InstanceArgs(n, nil, nil), sqlstore.Nanos(c.Now), sqlstore.NullIfEmpty(c.Result), sqlstore.EncodeFailure(c.Failure),
		c.CustomStatus, int64(len(c.NewEvents)), sqlstore.PersistentTaken(c.NewEvents), waitingOn, waits)
	args[2] = string(c.Status)
	inserted, err := t.DB.Exec(ctx, createTurned, args...)
	if err != nil {
		return err
	}
	if inserted == 0 {
		return t.NotInserted(ctx, n)
	}
	return t.InsertAudit(ctx, n.Audit)
}

// Finish writes what the commit c leaves of the instance, unless the
// transaction inserted it so already (created).
func (t writeTx) Finish(ctx context.Context, c store.TurnCommit, lastEventID int64, persistentTaken int) error {
	if t.created {
		return nil
	}
	return t.Tx.Finish(ctx, c, lastEventID, persistentTaken)
}

// createLocked inserts an instance (sqlstore.InstanceArgs) locked with
// token $9 for host $10 until $11, its first delivery counted, as a lock
// of it would set them (lockBatch), and returns what a work item holds of
// it.
var createLocked = insertInstance("$5", `, lock_token, lock_owner, locked_until, attempt`, `, $9, $10, $11, 1`) + `
	RETURNING ` + sqlstore.InstanceColumns + `, last_event_id, attempt`

// CommitTurnLeasing commits a turn, as CommitTurn does, and leases to
// this host up to max of the tasks it queues on the host's own queue, in
// one transaction.
func (s *Store) CommitTurnLeasing(ctx context.Context, c store.TurnCommit, lease time.Duration, max int) ([]*store.ActivityWork, error) {
	var done *committed
	err := s.write(ctx, func(tx *pipeTx) error {
		done = &committed{c: c}
		return s.commitTurn(ctx, tx, done, lease, max)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: commit turn of %q: %w", c.InstanceID, err)
	}
	s.announce(done.announces()...)
	return done.leased(), nil
}

// committed is a turn's commit, and what it tells once its transaction
// has committed.
type committed struct {
	c store.TurnCommit
	// lease is the lease of the tasks the commit leased to this host,
	// read with its statements, if it leased; parent is whether the
	// instance has a parent.
	lease  *taskLease
	parent bool
	// locked, when not nil, is the instance as its transaction locked it
	// already (writeTx.Locked); created is set when it inserted the
	// instance as the turn leaves it (writeTx.created).
	locked  *sqlstore.Locked
	created bool
}

// leased is the tasks the commit leased to this host, by id.
func (d *committed) leased() []*store.ActivityWork {
	if d.lease == nil {
		return nil
	}
	return d.lease.leased
}

// announces is what the commit announces (watch.go).
func (d *committed) announces() []string { return turnAnnounces(d.c, len(d.leased()), d.parent) }

// commitTurn commits d.c in tx and leases up to max of its tasks on the
// host's own queue as it inserts them (writeTx.QueueActivities): d tells
// them once tx has committed.
func (s *Store) commitTurn(ctx context.Context, tx *pipeTx, d *committed, lease time.Duration, max int) error {
	c := d.c
	wt := newWriteTx(tx)
	wt.parent, wt.locked, wt.created = &d.parent, d.locked, d.created
	if schedules, _ := sqlstore.ToLease(c, max); len(schedules) > 0 {
		wt.lease = &taskLease{schedules: schedules, token: sqlstore.NewToken(), host: s.opts.HostID, until: sqlstore.Nanos(c.Now.Add(lease))}
		d.lease = wt.lease
	}
	return sqlstore.CommitTurn(ctx, wt, c)
}

// CompleteAndTurn records the outcome of w and, when nobody holds its
// instance, runs the instance's next turn (next) and commits it, in one
// transaction: a synced one when the turn commits, otherwise one that
// does not wait for the WAL flush, as CompleteActivity.
//
// The turn takes the result as the newest of its work item's messages
// without its being written: a message of id resultMessage(w), which is
// no row's. The result's row is inserted only when no turn that consumes
// it commits (the instance held, the turn declined, or a commit that
// leaves it), so that an outcome is in messages unless a committed turn
// took it.
func (s *Store) CompleteAndTurn(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time, lease time.Duration,
	next func(*store.WorkItem) (*store.TurnCommit, int)) (bool, []*store.ActivityWork, error) {
	payload, err := json.Marshal(result)
	if err != nil {
		return false, nil, fmt.Errorf("postgres: complete activity %d: encode %s: %w", w.ID, result.Kind, err)
	}
	var done *committed
	err = s.commit(ctx, func(tx *pipeTx) (unsyncedCommit bool, err error) {
		done = nil
		if err := takeTask(tx, w, result); err != nil {
			return false, err
		}
		item, locked, err := holdInstance(ctx, tx, w.InstanceID, w.ExecutionID, now)
		switch {
		case err != nil:
			return false, err
		case item == nil:
			// Another turn holds it, or nothing would take the result: the
			// result waits as a message, as CompleteActivity leaves it.
			if err := enqueueResult(tx, w, result, payload, now); err != nil {
				return false, err
			}
			return true, unsynced(ctx, tx)
		}
		id := resultMessage(w)
		item.Messages = append(item.Messages, store.Message{ID: id, Event: result})
		c, max := next(item)
		if c == nil {
			// An expired lock the instance had ends, as a commit would end
			// it, and the result waits as a message.
			if err := tx.Send(`UPDATE instances SET lock_token = NULL, lock_owner = NULL, locked_until = 0 WHERE id = $1 AND lock_token IS NOT NULL`, w.InstanceID); err != nil {
				return false, err
			}
			if err := enqueueResult(tx, w, result, payload, now); err != nil {
				return false, err
			}
			return true, unsynced(ctx, tx)
		}
		turn := *c
		if i := slices.Index(turn.Consumed, id); i >= 0 {
			turn.Consumed = slices.Delete(slices.Clone(turn.Consumed), i, i+1)
		} else if err := enqueueResult(tx, w, result, payload, now); err != nil {
			return false, err
		}
		done = &committed{c: turn, locked: locked}
		return false, s.commitTurn(ctx, tx, done, lease, max)
	})
	if err != nil {
		return false, nil, fmt.Errorf("postgres: complete activity %d and run its turn: %w", w.ID, err)
	}
	if done == nil {
		s.announce(announceTurns)
		return false, nil, nil
	}
	s.announce(done.announces()...)
	return true, done.leased(), nil
}

// resultMessage is the id of the message CompleteAndTurn hands its turn
// the result of w as, unwritten: the negative of the task's id, which no
// row of messages has (their ids are positive), as store/sqlite's results
// kept in memory.
func resultMessage(w *store.ActivityWork) int64 { return -w.ID }

// unsynced makes tx commit without waiting for the WAL flush
// (writeUnsynced).
func unsynced(ctx context.Context, tx *pipeTx) error {
	return tx.Send(`SET LOCAL synchronous_commit TO off`)
}
