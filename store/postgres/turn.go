package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Locked locks the instance's row (FOR UPDATE) for the rest of the turn.
func (t writeTx) Locked(ctx context.Context, id string) (sqlstore.Locked, error) {
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
	return pgx.BeginFunc(ctx, t.tx, func(sp pgx.Tx) error { return newWriteTx(sp).Tx.InsertChild(ctx, n, parent, schedule) })
}

// consumeQuery deletes the messages $2 of instance $1, each looked up by
// its key (TestQueuePlansWalkIndexes).
const consumeQuery = `DELETE FROM messages WHERE instance_id = $1 AND id = ANY($2)`

func (t writeTx) Consume(ctx context.Context, id string, messages []int64) error {
	if _, err := t.tx.Exec(ctx, consumeQuery, id, messages); err != nil {
		return fmt.Errorf("consume messages: %w", err)
	}
	return nil
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
	_, err := t.tx.Exec(ctx, `INSERT INTO history (instance_id, execution_id, event_id, kind, payload)
		SELECT $1, $2, e.id, e.kind, e.payload FROM unnest($3::bigint[], $4::text[], $5::bytea[]) AS e(id, kind, payload)`,
		id, execution, ids, kinds, payloads)
	if err != nil {
		return fmt.Errorf("append history: %w", err)
	}
	return nil
}

// rankQuery is the rank of the next task instance $2 queues on queue $3 at
// $1: the larger of the queue's first waiting task's and the one after the
// instance's last task's there. Each is the first entry of an index walk
// (TestQueuePlansWalkIndexes); the last task's is a walk backwards, where
// max() let the planner read all the instance's tasks.
const rankQuery = `SELECT greatest(
	coalesce((SELECT fair_rank FROM activity_tasks WHERE queue = $3 AND locked_until <= $1 ORDER BY fair_rank, id LIMIT 1), 0),
	coalesce((SELECT fair_rank + 1 FROM activity_tasks WHERE instance_id = $2 AND queue = $3 ORDER BY fair_rank DESC LIMIT 1), 0))`

// QueueActivities queues the tasks in the fair order
// store.Store.LockNextActivities describes, per task queue: the instance's
// tasks on a queue take the ranks that follow both its own last one there
// and the queue's first waiting task's, one each, and workers take tasks
// by rank. (Two hosts that queue at once may give tasks the same rank; the
// id orders them.)
func (t writeTx) QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	if len(tasks) == 0 {
		return nil
	}
	tx := t.tx
	next := map[string]int64{} // by queue, the rank of the next task
	for _, a := range tasks {
		rank, ok := next[a.Queue]
		if !ok {
			if err := tx.QueryRow(ctx, rankQuery, sqlstore.Nanos(now), id, a.Queue).Scan(&rank); err != nil {
				return fmt.Errorf("activities: their rank: %w", err)
			}
		}
		next[a.Queue] = rank + 1
		if _, err := tx.Exec(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at, fair_rank, timeout_ms,
				queue, heartbeat_timeout_ms, retry) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			id, execution, moduleHash, a.ScheduleID, a.Name, sqlstore.NullIfEmpty(a.Input), sqlstore.Nanos(now), rank, a.Timeout.Milliseconds(),
			a.Queue, a.HeartbeatTimeout.Milliseconds(), sqlstore.EncodeRetry(a.Retry)); err != nil {
			return fmt.Errorf("activity %d: %w", a.ScheduleID, err)
		}
	}
	return nil
}

// Handing a host the work it makes for itself (store.Handoff): each of
// these is what the plain calls in a row do, in one transaction, so that
// a hello (a start, two turns and an activity) costs three commits and a
// step of a sequence one, where each plain call is a commit of its own.
var _ store.Handoff = (*Store)(nil)

// CreateLocked creates the instance n, as CreateInstance does, and locks
// it for this host until n.Now+lease, in one transaction.
func (s *Store) CreateLocked(ctx context.Context, n store.NewInstance, lease time.Duration) (*store.WorkItem, error) {
	var item *store.WorkItem
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		if err := newWriteTx(tx).InsertInstance(ctx, n, nil, nil); err != nil {
			return err
		}
		item, err = s.lockInstance(ctx, tx, n.ID, n.Now, lease)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: create instance %q: %w", n.ID, err)
	}
	return item, nil
}

// CommitTurnLeasing commits a turn, as CommitTurn does, and leases to
// this host up to max of the tasks it queues on the host's own queue, in
// one transaction.
func (s *Store) CommitTurnLeasing(ctx context.Context, c store.TurnCommit, lease time.Duration, max int) ([]*store.ActivityWork, error) {
	var ws []*store.ActivityWork
	var announce []string
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		ws, announce, err = s.commitLeasing(ctx, tx, c, lease, max)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: commit turn of %q: %w", c.InstanceID, err)
	}
	s.announce(announce...)
	return ws, nil
}

// commitLeasing commits c in tx and leases up to max of its tasks on the
// host's own queue; it returns them, and what to announce of the commit.
func (s *Store) commitLeasing(ctx context.Context, tx pgx.Tx, c store.TurnCommit, lease time.Duration, max int) ([]*store.ActivityWork, []string, error) {
	ws, parent, err := s.commitTurn(ctx, tx, c, lease, max)
	if err != nil {
		return nil, nil, err
	}
	return ws, turnAnnounces(c, len(ws), parent), nil
}

// commitTurn commits c in tx and leases up to max of its tasks on the
// host's own queue; it reports whether the instance has a parent.
func (s *Store) commitTurn(ctx context.Context, tx pgx.Tx, c store.TurnCommit, lease time.Duration, max int) ([]*store.ActivityWork, bool, error) {
	var parent bool
	wt := newWriteTx(tx)
	wt.parent = &parent
	if err := sqlstore.CommitTurn(ctx, wt, c); err != nil {
		return nil, false, err
	}
	var schedules []int64
	for _, a := range c.Activities {
		if a.Queue == "" && len(schedules) < max {
			schedules = append(schedules, a.ScheduleID)
		}
	}
	if len(schedules) == 0 || c.ContinueAsNew != nil || c.Status.IsTerminal() {
		return nil, parent, nil
	}
	rows, err := tx.Query(ctx, `UPDATE activity_tasks SET `+leaseColumns+`
		WHERE instance_id = $5 AND execution_id = $6 AND schedule_id = ANY($7) AND queue = '' AND locked_until = 0
		RETURNING `+leasedColumns,
		sqlstore.NewToken(), s.opts.HostID, sqlstore.Nanos(c.Now.Add(lease)), sqlstore.Nanos(c.Now), c.InstanceID, c.ExecutionID, schedules)
	ws, err := scanLeased(rows, err)
	if err != nil {
		return nil, false, fmt.Errorf("lease its activities: %w", err)
	}
	return ws, parent, nil
}

// CompleteAndTurn records the outcome of w and, when nobody holds its
// instance, runs the instance's next turn (next) and commits it, in one
// transaction: a synced one when the turn commits, otherwise one that
// does not wait for the WAL flush, as CompleteActivity.
func (s *Store) CompleteAndTurn(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time, lease time.Duration,
	next func(*store.WorkItem) (*store.TurnCommit, int)) (turned bool, leased []*store.ActivityWork, err error) {
	payload, err := json.Marshal(result)
	if err != nil {
		return false, nil, fmt.Errorf("postgres: complete activity %d: encode %s: %w", w.ID, result.Kind, err)
	}
	var announce []string
	err = s.commit(ctx, func(tx pgx.Tx) (unsyncedCommit bool, err error) {
		turned, leased, announce = false, nil, []string{announceTurns}
		if err := completeIn(ctx, tx, w, result, payload, now); err != nil {
			return false, err
		}
		var status string
		err = tx.QueryRow(ctx, `SELECT status FROM instances WHERE id = $1 AND execution_id = $2 AND locked_until <= $3 FOR UPDATE SKIP LOCKED`,
			w.InstanceID, w.ExecutionID, sqlstore.Nanos(now)).Scan(&status)
		switch {
		case errors.Is(err, pgx.ErrNoRows) || err == nil && engine.Status(status).IsTerminal():
			// Another turn holds it, or nothing would take the result: the
			// result waits as a message, as CompleteActivity leaves it.
			return true, unsynced(ctx, tx)
		case err != nil:
			return false, err
		}
		item, err := s.lockInstance(ctx, tx, w.InstanceID, now, lease)
		if err != nil {
			return false, err
		}
		c, max := next(item)
		if c == nil {
			if _, err := tx.Exec(ctx, `UPDATE instances SET lock_token = NULL, lock_owner = NULL, locked_until = 0, attempt = attempt - 1 WHERE id = $1`, w.InstanceID); err != nil {
				return false, err
			}
			return true, unsynced(ctx, tx)
		}
		leased, announce, err = s.commitLeasing(ctx, tx, *c, lease, max)
		turned = err == nil
		return false, err
	})
	if err != nil {
		return false, nil, fmt.Errorf("postgres: complete activity %d and run its turn: %w", w.ID, err)
	}
	s.announce(announce...)
	return turned, leased, nil
}

// unsynced makes tx commit without waiting for the WAL flush
// (writeUnsynced).
func unsynced(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SET LOCAL synchronous_commit TO off`)
	return err
}
