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
)

// CommitTurn commits a turn and unlocks the instance, in one transaction:
// all of it or, on any error, none of it. It returns an error wrapping
// store.ErrLeaseLost if c.LockToken no longer holds the instance's lock:
// the instance's row is locked (FOR UPDATE) while the token is checked and
// the turn written, so a host whose lock expired and was taken over cannot
// write a turn another host has written (fencing: each lock has its own
// token).
func (s *Store) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	if err := s.write(ctx, func(tx pgx.Tx) error { return commitTurn(ctx, tx, c) }); err != nil {
		return fmt.Errorf("postgres: commit turn of %q: %w", c.InstanceID, err)
	}
	return nil
}

// locked is what a commit needs to know of the instance it commits.
type locked struct {
	token          *string
	execution      int64
	lastEventID    int64
	moduleHash     string
	parent         *string
	parentSchedule *int64
}

func commitTurn(ctx context.Context, tx pgx.Tx, c store.TurnCommit) error {
	var l locked
	err := tx.QueryRow(ctx, `
		SELECT lock_token, execution_id, last_event_id, module_hash, parent_id, parent_schedule_id
		FROM instances WHERE id = $1 FOR UPDATE`, c.InstanceID).
		Scan(&l.token, &l.execution, &l.lastEventID, &l.moduleHash, &l.parent, &l.parentSchedule)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("instance %q %w", c.InstanceID, store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if l.token == nil || *l.token != c.LockToken {
		return fmt.Errorf("%w: the instance is not locked with this token", store.ErrLeaseLost)
	}
	if c.ExecutionID != l.execution {
		return fmt.Errorf("execution %d is not the instance's current one, %d", c.ExecutionID, l.execution)
	}
	if c.Now.IsZero() {
		return errors.New("the commit has no time (TurnCommit.Now is zero)")
	}
	for i, ev := range c.NewEvents {
		if want := l.lastEventID + int64(i) + 1; ev.ID != want {
			return fmt.Errorf("new event %d has id %d where history continues at %d", i, ev.ID, want)
		}
	}
	if err := writeWork(ctx, tx, c, l.moduleHash); err != nil {
		return err
	}
	for _, child := range c.Children {
		if err := startChild(ctx, tx, c.InstanceID, child, c.Now); err != nil {
			return fmt.Errorf("child %q: %w", child.ID, err)
		}
	}
	for _, o := range c.Outgoing {
		if _, err := enqueue(ctx, tx, o.InstanceID, o.Event, visibleNow, c.Now); err != nil {
			return fmt.Errorf("message for %q: %w", o.InstanceID, err)
		}
	}
	if c.DropWaiting {
		if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE instance_id = $1`, c.InstanceID); err != nil {
			return fmt.Errorf("drop messages: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM activity_tasks WHERE instance_id = $1 AND locked_until <= $2`, c.InstanceID, nanos(c.Now)); err != nil {
			return fmt.Errorf("drop activity tasks: %w", err)
		}
	}
	if c.ContinueAsNew != nil {
		if c.ContinueAsNew.Started.Kind != engine.OrchestrationStarted {
			return errors.New("the continue-as-new has no OrchestrationStarted to begin the next execution (ContinueAsNew.Started)")
		}
		return continueAsNew(ctx, tx, c)
	}
	if c.Status.IsTerminal() && l.parent != nil && l.parentSchedule != nil {
		if _, err := enqueue(ctx, tx, *l.parent, engine.Report(*l.parentSchedule, c.Status, c.Result, c.Failure), visibleNow, c.Now); err != nil {
			return fmt.Errorf("report to parent %q: %w", *l.parent, err)
		}
	}
	_, err = tx.Exec(ctx, `
		UPDATE instances SET status = $1, result = $2, failure = $3, custom_status = coalesce($4, custom_status), updated_at = $5,
			last_event_id = $6, lock_token = NULL, lock_owner = NULL, locked_until = 0, attempt = 0, persistent_taken = persistent_taken + $7
		WHERE id = $8`,
		string(c.Status), nullIfEmpty(c.Result), encodeFailure(c.Failure), c.CustomStatus, nanos(c.Now),
		l.lastEventID+int64(len(c.NewEvents)), persistentTaken(c.NewEvents), c.InstanceID)
	return err
}

// persistentTaken counts the persistent events among events.
func persistentTaken(events []engine.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == engine.ExternalEventPersistent {
			n++
		}
	}
	return n
}

// writeWork appends the new events to history, queues the activity tasks
// (on the instance's module) and the timers, and removes the consumed
// messages.
func writeWork(ctx context.Context, tx pgx.Tx, c store.TurnCommit, moduleHash string) error {
	if err := appendHistory(ctx, tx, c.InstanceID, c.ExecutionID, c.NewEvents); err != nil {
		return err
	}
	if err := queueActivities(ctx, tx, c.InstanceID, c.ExecutionID, moduleHash, c.Activities, c.Now); err != nil {
		return err
	}
	if err := queueTimers(ctx, tx, c.InstanceID, c.Timers, c.Now); err != nil {
		return err
	}
	if len(c.Consumed) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE instance_id = $1 AND id = ANY($2)`, c.InstanceID, c.Consumed); err != nil {
			return fmt.Errorf("consume messages: %w", err)
		}
	}
	return nil
}

// appendHistory appends events to an execution's history, in one
// round trip.
func appendHistory(ctx context.Context, tx pgx.Tx, id string, execution int64, events []engine.Event) error {
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
	_, err := tx.Exec(ctx, `INSERT INTO history (instance_id, execution_id, event_id, kind, payload)
		SELECT $1, $2, e.id, e.kind, e.payload FROM unnest($3::bigint[], $4::text[], $5::bytea[]) AS e(id, kind, payload)`,
		id, execution, ids, kinds, payloads)
	if err != nil {
		return fmt.Errorf("append history: %w", err)
	}
	return nil
}

// queueActivities queues activity tasks of an execution at now, to run on
// moduleHash, in the fair order store.Store.LockNextActivities describes:
// the instance's tasks take the ranks that follow both its own last one
// and the first waiting task's, one each, and workers take tasks by rank.
// (Two hosts that queue at once may give tasks the same rank; the id
// orders them.)
func queueActivities(ctx context.Context, tx pgx.Tx, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	if len(tasks) == 0 {
		return nil
	}
	var rank int64
	if err := tx.QueryRow(ctx, `SELECT greatest(
			coalesce((SELECT fair_rank FROM activity_tasks WHERE locked_until <= $1 ORDER BY fair_rank, id LIMIT 1), 0),
			coalesce((SELECT max(fair_rank) + 1 FROM activity_tasks WHERE instance_id = $2), 0))`, nanos(now), id).Scan(&rank); err != nil {
		return fmt.Errorf("activities: their rank: %w", err)
	}
	for i, a := range tasks {
		if _, err := tx.Exec(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at, fair_rank) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			id, execution, moduleHash, a.ScheduleID, a.Name, nullIfEmpty(a.Input), nanos(now), rank+int64(i)); err != nil {
			return fmt.Errorf("activity %d: %w", a.ScheduleID, err)
		}
	}
	return nil
}

// queueTimers enqueues the engine's TimerFired of each timer at now,
// visible when due.
func queueTimers(ctx context.Context, tx pgx.Tx, id string, timers []engine.TimerTask, now time.Time) error {
	for _, t := range timers {
		if _, err := enqueue(ctx, tx, id, t.Fired(), dueAt(t.FireAt), now); err != nil {
			return fmt.Errorf("timer %d: %w", t.ScheduleID, err)
		}
	}
	return nil
}

// startChild creates a child instance at now or, when it cannot start,
// reports the failure to its parent at once (unless it is detached), as
// engine.ChildNotStarted words it.
func startChild(ctx context.Context, tx pgx.Tx, parent string, c store.NewChild, now time.Time) error {
	var schedule *int64
	if !c.Detached {
		schedule = &c.ScheduleID
	}
	reason := fmt.Sprintf("no deployed module registers orchestration %q", c.Name)
	if c.ModuleHash != "" {
		n := store.NewInstance{ID: c.ID, Name: c.Name, ModuleHash: c.ModuleHash, Input: c.Input, Now: now}
		// A child is work of its parent, which has begun. A savepoint
		// keeps the turn's transaction when the insert fails.
		err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error { return insertInstance(ctx, sp, n, visibleNow, &parent, schedule) })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, store.ErrInstanceExists):
			reason = fmt.Sprintf("instance id %q is already taken", c.ID)
		case errors.Is(err, store.ErrNotFound):
			reason = fmt.Sprintf("module %s is not deployed", c.ModuleHash)
		default:
			return err
		}
	}
	if c.Detached {
		return nil
	}
	_, err := enqueue(ctx, tx, parent, engine.ChildNotStarted(c.ScheduleID, c.Name, reason), visibleNow, now)
	return err
}

// continueAsNew ends the instance's execution and starts the next one,
// whose messages are the engine's Started and Carried, followed by the
// messages the ended execution left that engine.OutlivesExecution keeps.
// The ended execution's children no longer report, and its activity tasks
// not yet leased are dropped (the results of those leased go to nobody).
func continueAsNew(ctx context.Context, tx pgx.Tx, c store.TurnCommit) error {
	can := c.ContinueAsNew
	left, err := takeLeftovers(ctx, tx, c.InstanceID)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE parent_id = $1`, c.InstanceID); err != nil {
		return fmt.Errorf("continue as new: detach children: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM activity_tasks WHERE instance_id = $1 AND execution_id = $2 AND lock_token IS NULL`, c.InstanceID, c.ExecutionID); err != nil {
		return fmt.Errorf("continue as new: drop activity tasks: %w", err)
	}
	_, err = tx.Exec(ctx, `
		UPDATE instances SET execution_id = execution_id + 1, status = $1, input = $2, result = NULL, failure = NULL,
			custom_status = coalesce($3, custom_status), updated_at = $4, last_event_id = 0, lock_token = NULL, lock_owner = NULL,
			locked_until = 0, attempt = 0, persistent_taken = 0
		WHERE id = $5`,
		string(engine.StatusPending), nullIfEmpty(can.Input), c.CustomStatus, nanos(c.Now), c.InstanceID)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO continued_executions (instance_id, execution_id, ended_at) VALUES ($1, $2, $3)`,
		c.InstanceID, c.ExecutionID, nanos(c.Now)); err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	for _, m := range append([]engine.Event{can.Started}, can.Carried...) {
		if _, err := enqueue(ctx, tx, c.InstanceID, m, visibleNow, c.Now); err != nil {
			return fmt.Errorf("continue as new: %w", err)
		}
	}
	if err := requeue(ctx, tx, c.InstanceID, left); err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	return nil
}

// leftover is a message an ended execution did not consume.
type leftover struct {
	kind                  string
	payload               []byte
	visibleAt, enqueuedAt int64
}

// takeLeftovers removes the messages of an instance whose execution ends
// and returns those the next execution is to get, oldest first: those
// engine.OutlivesExecution keeps.
func takeLeftovers(ctx context.Context, tx pgx.Tx, id string) ([]leftover, error) {
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

// requeue enqueues again the leftovers takeLeftovers took, as they were,
// in their order.
func requeue(ctx context.Context, tx pgx.Tx, id string, left []leftover) error {
	for _, m := range left {
		if _, err := tx.Exec(ctx, `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at) VALUES ($1, $2, $3, $4, $5)`,
			id, m.kind, m.payload, m.visibleAt, m.enqueuedAt); err != nil {
			return fmt.Errorf("requeue message: %w", err)
		}
	}
	return nil
}
