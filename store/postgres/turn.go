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
	if err := s.write(ctx, func(tx pgx.Tx) error { return sqlstore.CommitTurn(ctx, newWriteTx(tx), c) }); err != nil {
		return fmt.Errorf("postgres: commit turn of %q: %w", c.InstanceID, err)
	}
	return nil
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
