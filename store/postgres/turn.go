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

func (t writeTx) Finish(ctx context.Context, c store.TurnCommit, lastEventID int64, persistentTaken int) error {
	_, err := t.tx.Exec(ctx, `
		UPDATE instances SET status = $1, result = $2, failure = $3, custom_status = coalesce($4, custom_status), updated_at = $5,
			last_event_id = $6, lock_token = NULL, lock_owner = NULL, locked_until = 0, attempt = 0, persistent_taken = persistent_taken + $7
		WHERE id = $8`,
		string(c.Status), sqlstore.NullIfEmpty(c.Result), sqlstore.EncodeFailure(c.Failure), c.CustomStatus, sqlstore.Nanos(c.Now),
		lastEventID, persistentTaken, c.InstanceID)
	return err
}

func (t writeTx) InsertChild(ctx context.Context, n store.NewInstance, parent string, schedule *int64) error {
	// A child is work of its parent, which has begun. A savepoint keeps
	// the turn's transaction when the insert fails.
	return pgx.BeginFunc(ctx, t.tx, func(sp pgx.Tx) error { return newWriteTx(sp).Tx.InsertChild(ctx, n, parent, schedule) })
}

func (t writeTx) DropWaiting(ctx context.Context, id string, now time.Time) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM messages WHERE instance_id = $1`, id); err != nil {
		return fmt.Errorf("drop messages: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM activity_tasks WHERE instance_id = $1 AND locked_until <= $2`, id, sqlstore.Nanos(now)); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	return nil
}

func (t writeTx) Consume(ctx context.Context, id string, messages []int64) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM messages WHERE instance_id = $1 AND id = ANY($2)`, id, messages); err != nil {
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

// QueueActivities queues the tasks in the fair order
// store.Store.LockNextActivities describes: the instance's tasks take the
// ranks that follow both its own last one and the first waiting task's,
// one each, and workers take tasks by rank. (Two hosts that queue at once
// may give tasks the same rank; the id orders them.)
func (t writeTx) QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	if len(tasks) == 0 {
		return nil
	}
	tx := t.tx
	var rank int64
	if err := tx.QueryRow(ctx, `SELECT greatest(
			coalesce((SELECT fair_rank FROM activity_tasks WHERE locked_until <= $1 ORDER BY fair_rank, id LIMIT 1), 0),
			coalesce((SELECT max(fair_rank) + 1 FROM activity_tasks WHERE instance_id = $2), 0))`, sqlstore.Nanos(now), id).Scan(&rank); err != nil {
		return fmt.Errorf("activities: their rank: %w", err)
	}
	for i, a := range tasks {
		if _, err := tx.Exec(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at, fair_rank, timeout_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, execution, moduleHash, a.ScheduleID, a.Name, sqlstore.NullIfEmpty(a.Input), sqlstore.Nanos(now), rank+int64(i), a.Timeout.Milliseconds()); err != nil {
			return fmt.Errorf("activity %d: %w", a.ScheduleID, err)
		}
	}
	return nil
}

// NextExecution sets the instance at the next execution (sqlstore.TurnTx).
func (t writeTx) NextExecution(ctx context.Context, c store.TurnCommit) error {
	tx := t.tx
	if _, err := tx.Exec(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE parent_id = $1`, c.InstanceID); err != nil {
		return fmt.Errorf("detach children: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM activity_tasks WHERE instance_id = $1 AND execution_id = $2 AND lock_token IS NULL`, c.InstanceID, c.ExecutionID); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	_, err := tx.Exec(ctx, `
		UPDATE instances SET execution_id = execution_id + 1, status = $1, input = $2, result = NULL, failure = NULL,
			custom_status = coalesce($3, custom_status), updated_at = $4, last_event_id = 0, lock_token = NULL, lock_owner = NULL,
			locked_until = 0, attempt = 0, persistent_taken = 0
		WHERE id = $5`,
		string(engine.StatusPending), sqlstore.NullIfEmpty(c.ContinueAsNew.Input), c.CustomStatus, sqlstore.Nanos(c.Now), c.InstanceID)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO continued_executions (instance_id, execution_id, ended_at) VALUES ($1, $2, $3)`,
		c.InstanceID, c.ExecutionID, sqlstore.Nanos(c.Now))
	return err
}

// leftover is a message an ended execution did not consume.
type leftover struct {
	kind                  string
	payload               []byte
	visibleAt, enqueuedAt int64
}

// TakeLeftovers removes the messages of an instance whose execution ends
// and returns those the next execution is to get, oldest first: those
// engine.OutlivesExecution keeps.
func (t writeTx) TakeLeftovers(ctx context.Context, id string) ([]leftover, error) {
	tx := t.tx
	rows, err := tx.Query(ctx, `DELETE FROM messages WHERE instance_id = $1 RETURNING id, kind, payload, visible_at, enqueued_at`, id)
	if err != nil {
		return nil, err
	}
	type row struct {
		id int64
		leftover
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.kind, &r.payload, &r.visibleAt, &r.enqueuedAt); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b row) int { return cmp.Compare(a.id, b.id) })
	var keep []leftover
	for _, r := range all {
		var ev engine.Event
		if err := json.Unmarshal(r.payload, &ev); err != nil {
			return nil, fmt.Errorf("decode message %d: %w", r.id, err)
		}
		if engine.OutlivesExecution(ev) {
			keep = append(keep, r.leftover)
		}
	}
	return keep, nil
}

// Requeue enqueues again the leftovers TakeLeftovers took, as they were,
// in their order.
func (t writeTx) Requeue(ctx context.Context, id string, left []leftover) error {
	tx := t.tx
	for _, m := range left {
		if _, err := tx.Exec(ctx, `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at) VALUES ($1, $2, $3, $4, $5)`,
			id, m.kind, m.payload, m.visibleAt, m.enqueuedAt); err != nil {
			return fmt.Errorf("requeue message: %w", err)
		}
	}
	return nil
}
