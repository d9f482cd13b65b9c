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
)

// CommitTurn commits a turn and unlocks the instance, in one transaction:
// all of it or, on any error, none of it. It returns an error wrapping
// store.ErrLeaseLost if c.LockToken no longer holds the instance's lock.
// c.NewEvents must continue the execution's history without a gap.
func (s *Store) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return commitTurn(ctx, tx, c) }); err != nil {
		return fmt.Errorf("sqlite: commit turn of %q: %w", c.InstanceID, err)
	}
	return nil
}

// locked is what a commit needs to know of the instance it commits.
type locked struct {
	token          sql.NullString
	execution      int64
	lastEventID    int64
	moduleHash     string
	parent         sql.NullString
	parentSchedule sql.NullInt64
}

func commitTurn(ctx context.Context, tx *sql.Tx, c store.TurnCommit) error {
	var l locked
	err := tx.QueryRowContext(ctx, `
		SELECT lock_token, execution_id, last_event_id, module_hash, parent_id, parent_schedule_id
		FROM instances WHERE id = ?`, c.InstanceID).
		Scan(&l.token, &l.execution, &l.lastEventID, &l.moduleHash, &l.parent, &l.parentSchedule)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("instance %q %w", c.InstanceID, store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if !l.token.Valid || l.token.String != c.LockToken {
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
		if err := dropWaiting(ctx, tx, c); err != nil {
			return err
		}
	}
	if c.ContinueAsNew != nil {
		if c.ContinueAsNew.Started.Kind != engine.OrchestrationStarted {
			return errors.New("the continue-as-new has no OrchestrationStarted to begin the next execution (ContinueAsNew.Started)")
		}
		return continueAsNew(ctx, tx, c)
	}
	if c.Status.IsTerminal() && l.parent.Valid && l.parentSchedule.Valid {
		if err := reportToParent(ctx, tx, l.parent.String, l.parentSchedule.Int64, c.Status, c.Result, c.Failure, c.Now); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE instances SET status = ?, result = ?, failure = ?, custom_status = coalesce(?, custom_status), updated_at = ?,
			last_event_id = ?, lock_token = NULL, locked_until = 0, attempt = 0, persistent_taken = persistent_taken + ?
		WHERE id = ?`,
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

// dropWaiting removes the instance's messages (all of them consumed or
// left) and the activity tasks no worker holds at the commit's time.
func dropWaiting(ctx context.Context, tx *sql.Tx, c store.TurnCommit) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE instance_id = ?`, c.InstanceID); err != nil {
		return fmt.Errorf("drop messages: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE instance_id = ? AND locked_until <= ?`, c.InstanceID, nanos(c.Now)); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	return nil
}

// writeWork appends the new events to history, queues the activity tasks
// (on the instance's module) and the timers, and removes the consumed
// messages.
func writeWork(ctx context.Context, tx *sql.Tx, c store.TurnCommit, moduleHash string) error {
	if err := appendHistory(ctx, tx, c.InstanceID, c.ExecutionID, c.NewEvents); err != nil {
		return err
	}
	if err := queueActivities(ctx, tx, c.InstanceID, c.ExecutionID, moduleHash, c.Activities, c.Now); err != nil {
		return err
	}
	if err := queueTimers(ctx, tx, c.InstanceID, c.Timers, c.Now); err != nil {
		return err
	}
	for _, id := range c.Consumed {
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ? AND instance_id = ?`, id, c.InstanceID); err != nil {
			return fmt.Errorf("consume message %d: %w", id, err)
		}
	}
	return nil
}

// appendHistory appends events to an execution's history.
func appendHistory(ctx context.Context, tx *sql.Tx, id string, execution int64, events []engine.Event) error {
	for _, ev := range events {
		payload, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encode event %d: %w", ev.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO history (instance_id, execution_id, event_id, payload) VALUES (?, ?, ?, ?)`,
			id, execution, ev.ID, payload); err != nil {
			return fmt.Errorf("event %d: %w", ev.ID, err)
		}
	}
	return nil
}

// queueActivities queues activity tasks of an execution at now, to run on
// moduleHash, in the fair order store.Store.LockNextActivities describes:
// the instance's tasks take the ranks that follow both its own last one
// and the first waiting task's, one each, and workers take tasks by rank.
func queueActivities(ctx context.Context, tx *sql.Tx, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error {
	if len(tasks) == 0 {
		return nil
	}
	var first, last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT fair_rank FROM activity_tasks WHERE +locked_until <= ? ORDER BY fair_rank, id LIMIT 1`, nanos(now)).Scan(&first); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("activities: the queue's first rank: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT max(fair_rank) FROM activity_tasks WHERE instance_id = ?`, id).Scan(&last); err != nil {
		return fmt.Errorf("activities: the instance's last rank: %w", err)
	}
	rank := first.Int64
	if last.Valid {
		rank = max(rank, last.Int64+1)
	}
	for i, a := range tasks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at, fair_rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			id, execution, moduleHash, a.ScheduleID, a.Name, nullIfEmpty(a.Input), nanos(now), rank+int64(i)); err != nil {
			return fmt.Errorf("activity %d: %w", a.ScheduleID, err)
		}
	}
	return nil
}

// queueTimers enqueues the TimerFired of each timer at now, visible when
// due.
func queueTimers(ctx context.Context, tx *sql.Tx, id string, timers []engine.TimerTask, now time.Time) error {
	for _, t := range timers {
		if _, err := enqueue(ctx, tx, id, t.Fired(), dueAt(t.FireAt), now); err != nil {
			return fmt.Errorf("timer %d: %w", t.ScheduleID, err)
		}
	}
	return nil
}

// reportToParent tells the parent of a child that has ended how it ended,
// at now, in the engine's words.
func reportToParent(ctx context.Context, tx *sql.Tx, parent string, schedule int64, status engine.Status, result json.RawMessage, failure *engine.Failure, now time.Time) error {
	if _, err := enqueue(ctx, tx, parent, engine.Report(schedule, status, result, failure), visibleNow, now); err != nil {
		return fmt.Errorf("report to parent %q: %w", parent, err)
	}
	return nil
}

// startChild creates a child instance at now or, when it cannot start,
// reports the failure to its parent at once (unless it is detached), as
// engine.ChildNotStarted words it.
func startChild(ctx context.Context, tx *sql.Tx, parent string, c store.NewChild, now time.Time) error {
	var schedule any
	if !c.Detached {
		schedule = c.ScheduleID
	}
	reason := fmt.Sprintf("no deployed module registers orchestration %q", c.Name)
	if c.ModuleHash != "" {
		n := store.NewInstance{ID: c.ID, Name: c.Name, ModuleHash: c.ModuleHash, Input: c.Input, Now: now}
		// A child is work of its parent, which has begun.
		err := insertInstance(ctx, tx, n, visibleNow, parent, schedule)
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
// messages the ended execution left that engine.OutlivesExecution keeps. The ended execution's children no longer report, and its
// activity tasks not yet leased are dropped (the results of those leased
// are dropped by completeActivity).
func continueAsNew(ctx context.Context, tx *sql.Tx, c store.TurnCommit) error {
	can := c.ContinueAsNew
	left, err := takeLeftovers(ctx, tx, c.InstanceID)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	if err := detachChildren(ctx, tx, c.InstanceID, c.ExecutionID, `parent_schedule_id = NULL`); err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE instance_id = ? AND execution_id = ? AND lock_token IS NULL`, c.InstanceID, c.ExecutionID); err != nil {
		return fmt.Errorf("continue as new: drop activity tasks: %w", err)
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE instances SET execution_id = execution_id + 1, status = ?, input = ?, result = NULL, failure = NULL,
			custom_status = coalesce(?, custom_status), updated_at = ?, last_event_id = 0, lock_token = NULL, locked_until = 0, attempt = 0,
			persistent_taken = 0
		WHERE id = ?`,
		string(engine.StatusPending), nullIfEmpty(can.Input), c.CustomStatus, nanos(c.Now), c.InstanceID)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO continued_executions (instance_id, execution_id, ended_at) VALUES (?, ?, ?)`,
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

// requeue enqueues again the leftovers takeLeftovers took, as they were.
func requeue(ctx context.Context, tx *sql.Tx, id string, left []leftover) error {
	for _, m := range left {
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at) VALUES (?, ?, ?, ?)`,
			id, m.payload, m.visibleAt, m.enqueuedAt); err != nil {
			return fmt.Errorf("requeue message: %w", err)
		}
	}
	return nil
}

// detachChildren applies set (an UPDATE's SET clause) to the children an
// execution of parent started (all its executions if execution is 0), so
// that they no longer report to it. Only an execution whose history
// starts a child looks for them: instances has no index on parent_id.
func detachChildren(ctx context.Context, tx *sql.Tx, parent string, execution int64, set string) error {
	var started bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM history WHERE instance_id = ?1 AND (?2 = 0 OR execution_id = ?2)
		AND json_extract(payload, '$.kind') = ?3)`, parent, execution, string(engine.SubOrchestrationScheduled)).Scan(&started)
	if err != nil || !started {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE instances SET `+set+` WHERE parent_id = ?`, parent); err != nil {
		return fmt.Errorf("detach children: %w", err)
	}
	return nil
}

// leftover is a message an ended execution did not consume.
type leftover struct {
	payload               []byte
	visibleAt, enqueuedAt int64
}

// takeLeftovers removes the messages of an instance whose execution ends
// and returns those the next execution is to get, oldest first: those
// engine.OutlivesExecution keeps.
func takeLeftovers(ctx context.Context, tx *sql.Tx, id string) ([]leftover, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, payload, visible_at, enqueued_at FROM messages WHERE instance_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keep []leftover
	for rows.Next() {
		var m leftover
		var msgID int64
		var ev engine.Event
		if err := rows.Scan(&msgID, &m.payload, &m.visibleAt, &m.enqueuedAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(m.payload, &ev); err != nil {
			return nil, fmt.Errorf("decode message %d: %w", msgID, err)
		}
		if engine.OutlivesExecution(ev) {
			keep = append(keep, m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM messages WHERE instance_id = ?`, id)
	return keep, err
}
