package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Tx is the statements of a write transaction that both stores say alike,
// in one dialect: the part of TurnTx, EnqueueTx, PurgeTx, ModuleTx,
// OperateTx and ResetTx written once. Each store's transaction type embeds
// it and adds what is its own (how a lock is held, its columns of them).
type Tx struct {
	DB DB
	D  *Dialect
}

// exec runs a statement and returns how many rows it changed.
func (t Tx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	return t.DB.Exec(ctx, t.D.Rebind(query), args...)
}

// send runs a statement whose answer the caller does not read (DB.Send).
func (t Tx) send(ctx context.Context, query string, args ...any) error {
	return t.DB.Send(ctx, t.D.Rebind(query), args...)
}

func (t Tx) row(ctx context.Context, query string, args ...any) Row {
	return t.DB.QueryRow(ctx, t.D.Rebind(query), args...)
}

// Enqueue adds a message for an instance, visible from visibleAt (Unix
// nanoseconds), stored at now; it drops the message when the instance
// does not exist (Enqueuer).
func (t Tx) Enqueue(ctx context.Context, id string, ev engine.Event, visibleAt int64, now time.Time) error {
	return t.insertMessage(ctx, id, ev, visibleAt, nil, now)
}

// insertMessage is Enqueue for a message of a child's start too: one
// visible to start (VisibleToStart) takes its rank in the fair order of
// starts (Dialect.InsertStart), as the child of parent when parent is
// not nil.
func (t Tx) insertMessage(ctx context.Context, id string, ev engine.Event, visibleAt int64, parent *string, now time.Time) error {
	payload, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode %s message: %w", ev.Kind, err)
	}
	query, args := t.D.InsertMessage, []any{string(ev.Kind), payload, visibleAt, Nanos(now), id}
	if visibleAt == VisibleToStart {
		query, args = t.D.InsertStart, []any{string(ev.Kind), payload, Nanos(now), id, parent}
	}
	// Counted as one whether or not the instance exists: a count too many
	// only has SQLite look at its messages again.
	t.D.messagesChanged(1)
	return t.DB.Send(ctx, query, args...)
}

// InsertInstance creates a Pending instance in execution 1 with its
// OrchestrationStarted message, visible to start, in the fair order of
// starts: a child when parent is not nil, which reports its end to the
// parent's event schedule unless that is nil; with n.Audit, the audit
// record of its start. It returns
// store.ErrInstanceExists if the id is taken, or an error wrapping
// store.ErrNotFound if the module is not deployed.
func (t Tx) InsertInstance(ctx context.Context, n store.NewInstance, parent *string, schedule *int64) error {
	return t.insertInstance(ctx, n, parent, schedule, true)
}

// InsertFirst inserts n as InsertInstance does, for its first turn,
// which commits in the same transaction (store.Handoff.CreateAndTurn),
// with its start message only when withStart: the turn did not consume
// it.
func (t Tx) InsertFirst(ctx context.Context, n store.NewInstance, withStart bool) error {
	return t.insertInstance(ctx, n, nil, nil, withStart)
}

func (t Tx) insertInstance(ctx context.Context, n store.NewInstance, parent *string, schedule *int64, withStart bool) error {
	inserted, err := t.DB.Exec(ctx, t.D.InsertInstance, InstanceArgs(n, parent, schedule)...)
	if err != nil {
		return err
	}
	if inserted == 0 {
		return t.NotInserted(ctx, n)
	}
	if withStart {
		if err := t.insertMessage(ctx, n.ID, StartOf(n), VisibleToStart, parent, n.Now); err != nil {
			return err
		}
	}
	return t.InsertAudit(ctx, n.Audit)
}

// InstanceArgs are the arguments of Dialect.InsertInstance that insert n,
// a child of parent reporting to its event schedule when they are not
// nil.
func InstanceArgs(n store.NewInstance, parent *string, schedule *int64) []any {
	return []any{n.ID, n.Name, string(engine.StatusPending), NullIfEmpty(n.Input), Nanos(n.Now), parent, schedule, n.ModuleHash}
}

// NotInserted says why Dialect.InsertInstance inserted nothing for n:
// store.ErrInstanceExists if the id is taken, else an error wrapping
// store.ErrNotFound for its module.
func (t Tx) NotInserted(ctx context.Context, n store.NewInstance) error {
	var taken bool
	if err := t.row(ctx, `SELECT EXISTS (SELECT 1 FROM instances WHERE id = ?)`, n.ID).Scan(&taken); err != nil {
		return err
	}
	if taken {
		return store.ErrInstanceExists
	}
	return fmt.Errorf("module %s %w", n.ModuleHash, store.ErrNotFound)
}

// StartOf is the first message of the instance n: its start, or its
// scheduled start when it is a schedule's run, with who started it.
func StartOf(n store.NewInstance) engine.Event {
	start := engine.StartMessage(n.ID, n.Name, n.Input)
	if n.LastRun != nil {
		start = engine.ScheduledStart(n.ID, n.Name, n.Input, n.LastRun.Result, n.LastRun.Failure)
	}
	start.By = n.By
	return start
}

// InsertChild creates a child instance (TurnTx). Its start is served among
// the other starts, taking its turn with them as its parent's (see
// Dialect.InsertStart), so that one parent's many children do not hold
// back the instances started after them.
func (t Tx) InsertChild(ctx context.Context, n store.NewInstance, parent string, schedule *int64) error {
	return t.InsertInstance(ctx, n, &parent, schedule)
}

// Persistence reads the instance's status and the persistent events its
// execution took, locking its row where the dialect locks rows, so that
// two hosts raising at once count each other's (EnqueueTx).
func (t Tx) Persistence(ctx context.Context, id string) (engine.Status, int, error) {
	var status string
	var taken int
	err := t.row(ctx, `SELECT status, persistent_taken FROM instances WHERE id = ?`+t.D.Lock, id).Scan(&status, &taken)
	if t.D.NoRows(err) {
		return "", 0, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	return engine.Status(status), taken, err
}

// PersistentWaiting counts the persistent events waiting for the instance
// (EnqueueTx).
func (t Tx) PersistentWaiting(ctx context.Context, id string) (int, error) {
	var waiting int
	err := t.row(ctx, `SELECT count(*) FROM messages WHERE instance_id = ? AND `+t.D.MessageKind+` = ?`,
		id, string(engine.ExternalEventPersistent)).Scan(&waiting)
	return waiting, err
}

// Status reads the instance's status, locking its row where the dialect
// locks rows (PurgeTx).
func (t Tx) Status(ctx context.Context, id string) (engine.Status, bool, error) {
	var status string
	err := t.row(ctx, `SELECT status FROM instances WHERE id = ?`+t.D.Lock, id).Scan(&status)
	if t.D.NoRows(err) {
		return "", false, nil
	}
	return engine.Status(status), err == nil, err
}

// DeleteInstance deletes the instance with its history, messages,
// activity tasks and search attributes, and detaches its children (PurgeTx).
func (t Tx) DeleteInstance(ctx context.Context, id string) error {
	for _, statement := range []string{
		// A child of the instance must not report to a new one that takes
		// its id.
		`UPDATE instances SET parent_id = NULL, parent_schedule_id = NULL WHERE parent_id = ?`,
		`DELETE FROM history WHERE instance_id = ?`,
		`DELETE FROM continued_executions WHERE instance_id = ?`,
		`DELETE FROM messages WHERE instance_id = ?`,
		`DELETE FROM activity_tasks WHERE instance_id = ?`,
		`DELETE FROM updates WHERE instance_id = ?`,
		`DELETE FROM instance_attributes WHERE instance_id = ?`,
		`DELETE FROM instances WHERE id = ?`,
	} {
		if err := t.send(ctx, statement, id); err != nil {
			return err
		}
	}
	t.D.messagesChanged(1)
	return nil
}

// Orchestrations reads the module's list of orchestrations, locking its
// row where the dialect locks rows (ModuleTx).
func (t Tx) Orchestrations(ctx context.Context, hash string) (string, bool, error) {
	var orch string
	err := t.row(ctx, `SELECT orchestrations FROM modules WHERE hash = ?`+t.D.Lock, hash).Scan(&orch)
	if t.D.NoRows(err) {
		return "", false, nil
	}
	return orch, err == nil, err
}

// InstancesOn counts the instances that run on the module (ModuleTx).
func (t Tx) InstancesOn(ctx context.Context, hash string) (int, error) {
	var n int
	err := t.row(ctx, `SELECT count(*) FROM instances WHERE module_hash = ?`, hash).Scan(&n)
	return n, err
}

// Delete deletes the module and the orchestrations it is the newest
// module of (ModuleTx).
func (t Tx) Delete(ctx context.Context, hash string) error {
	for _, statement := range []string{`DELETE FROM orchestration_modules WHERE hash = ?`, `DELETE FROM modules WHERE hash = ?`} {
		if err := t.send(ctx, statement, hash); err != nil {
			return err
		}
	}
	return nil
}

// Repoint makes the newest module that registers the orchestration its
// module, if there is one (ModuleTx).
func (t Tx) Repoint(ctx context.Context, orchestration string) error {
	return t.DB.Send(ctx, t.D.Repoint, orchestration)
}

// ModuleExists reports whether the module hash is deployed (OperateTx).
func (t Tx) ModuleExists(ctx context.Context, hash string) (bool, error) {
	var ok bool
	err := t.row(ctx, `SELECT EXISTS (SELECT 1 FROM modules WHERE hash = ?)`, hash).Scan(&ok)
	return ok, err
}

// Detach makes the parent's children of the given ids no longer report
// to it (ResetTx).
func (t Tx) Detach(ctx context.Context, parent string, children []string) error {
	for _, child := range children {
		if err := t.send(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE id = ? AND parent_id = ?`, child, parent); err != nil {
			return fmt.Errorf("detach child %q: %w", child, err)
		}
	}
	return nil
}

// Child reads how a child of parent stands (ResetTx).
func (t Tx) Child(ctx context.Context, parent, id string) (ChildState, bool, error) {
	var c ChildState
	var status string
	err := t.row(ctx, `SELECT status, result, failure FROM instances WHERE id = ? AND parent_id = ?`, id, parent).
		Scan(&status, &c.Result, &c.Failure)
	if t.D.NoRows(err) {
		return c, false, nil
	}
	c.Status = engine.Status(status)
	return c, err == nil, err
}

// Reattach makes a child report to its parent's event schedule (ResetTx).
func (t Tx) Reattach(ctx context.Context, child string, schedule int64) error {
	return t.send(ctx, `UPDATE instances SET parent_schedule_id = ? WHERE id = ?`, schedule, child)
}

// ExceptHeld runs statement (which ends in a WHERE clause) with args on
// the activity tasks no worker holds at now (with anyLease, that no worker
// has a lease of, expired or not).
func (t Tx) ExceptHeld(ctx context.Context, now int64, anyLease bool, statement string, args ...any) error {
	cond, more, err := t.D.NotHeld(now, anyLease)
	if err == nil {
		err = t.send(ctx, statement+` AND `+cond, append(args, more...)...)
	}
	return err
}

// Finish records the turn's outcome in the instance's row, with what it
// waits on (unless the turn refused an update, which changes nothing it
// waits on), and unlocks it (TurnTx).
func (t Tx) Finish(ctx context.Context, c store.TurnCommit, lastEventID int64, persistentTaken int) error {
	waitingOn, waits, err := FinishWaits(c)
	if err != nil {
		return err
	}
	return t.send(ctx, `
		UPDATE instances SET status = ?, result = ?, failure = ?, custom_status = coalesce(?, custom_status), updated_at = ?,
			last_event_id = ?, persistent_taken = persistent_taken + ?, waiting_on = coalesce(?, waiting_on), waits = coalesce(?, waits),
			`+t.D.Unlock+`
		WHERE id = ?`,
		string(c.Status), NullIfEmpty(c.Result), EncodeFailure(c.Failure), c.CustomStatus, Nanos(c.Now),
		lastEventID, persistentTaken, waitingOn, waits, c.InstanceID)
}

// FinishWaits is what Finish writes of the waits the commit c keeps: the
// kinds (WaitingOn) and the waits, encoded; none (nil) when c answers a
// refused update, which leaves them as they were.
func FinishWaits(c store.TurnCommit) (waitingOn *string, waits []byte, err error) {
	if c.Refused != nil {
		return nil, nil, nil
	}
	on := WaitingOn(c.WaitingOn)
	if waits, err = json.Marshal(c.Waits); err != nil {
		return nil, nil, fmt.Errorf("encode waits: %w", err)
	}
	return &on, waits, nil
}

// DropWaiting removes the instance's messages and the activity tasks no
// worker holds at now (TurnTx).
func (t Tx) DropWaiting(ctx context.Context, id string, now time.Time) error {
	if err := t.send(ctx, `DELETE FROM messages WHERE instance_id = ?`, id); err != nil {
		return fmt.Errorf("drop messages: %w", err)
	}
	t.D.messagesChanged(1)
	if err := t.ExceptHeld(ctx, Nanos(now), false, `DELETE FROM activity_tasks WHERE instance_id = ?`, id); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	return nil
}

// DropRetries removes the execution's activity tasks waiting for a retry
// (their failures counted) that no worker holds at now: all of them when
// all, else those of the activities scheduled by the events schedules
// (TurnTx).
func (t Tx) DropRetries(ctx context.Context, id string, execution int64, schedules []int64, all bool, now time.Time) error {
	const retrying = `DELETE FROM activity_tasks WHERE instance_id = ? AND execution_id = ? AND failures > 0`
	if all {
		return t.ExceptHeld(ctx, Nanos(now), false, retrying, id, execution)
	}
	for _, schedule := range schedules {
		if err := t.ExceptHeld(ctx, Nanos(now), false, retrying+` AND schedule_id = ?`, id, execution, schedule); err != nil {
			return err
		}
	}
	return nil
}

// NextExecution sets the instance at the next execution, unlocked (TurnTx).
func (t Tx) NextExecution(ctx context.Context, c store.TurnCommit) error {
	if err := t.send(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE parent_id = ?`, c.InstanceID); err != nil {
		return fmt.Errorf("detach children: %w", err)
	}
	if err := t.ExceptHeld(ctx, 0, true, `DELETE FROM activity_tasks WHERE instance_id = ? AND execution_id = ?`, c.InstanceID, c.ExecutionID); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	if err := t.ClearAttributes(ctx, c.InstanceID); err != nil {
		return fmt.Errorf("clear search attributes: %w", err)
	}
	err := t.send(ctx, `
		UPDATE instances SET execution_id = execution_id + 1, status = ?, input = ?, result = NULL, failure = NULL,
			custom_status = coalesce(?, custom_status), updated_at = ?, last_event_id = 0, persistent_taken = 0,
			waiting_on = '', waits = NULL, `+t.D.Unlock+`
		WHERE id = ?`,
		string(engine.StatusPending), NullIfEmpty(c.ContinueAsNew.Input), c.CustomStatus, Nanos(c.Now), c.InstanceID)
	if err != nil {
		return err
	}
	err = t.send(ctx, `INSERT INTO continued_executions (instance_id, execution_id, ended_at) VALUES (?, ?, ?)`,
		c.InstanceID, c.ExecutionID, Nanos(c.Now))
	return err
}

// Restart drops the activity tasks of execution no worker has a lease of
// and sets the instance at execution+1 as r describes, its search
// attributes r.Attributes, unlocked (ResetTx).
func (t Tx) Restart(ctx context.Context, r store.Reset, execution int64) error {
	if err := t.ExceptHeld(ctx, 0, true, `DELETE FROM activity_tasks WHERE instance_id = ? AND execution_id = ?`, r.InstanceID, execution); err != nil {
		return fmt.Errorf("drop activity tasks: %w", err)
	}
	if err := t.ClearAttributes(ctx, r.InstanceID); err != nil {
		return fmt.Errorf("clear search attributes: %w", err)
	}
	if err := t.SetAttributes(ctx, r.InstanceID, r.Attributes); err != nil {
		return err
	}
	return t.send(ctx, `
		UPDATE instances SET execution_id = ?, module_hash = ?, status = ?, result = NULL, failure = NULL, custom_status = ?,
			updated_at = ?, last_event_id = ?, waiting_on = '', waits = NULL, `+t.D.Unlock+`
		WHERE id = ?`,
		execution+1, r.Module, string(engine.StatusRunning), r.CustomStatus, Nanos(r.Now), len(r.Kept), r.InstanceID)
}

// Leftover is a message an ended execution did not consume, as it was
// stored.
type Leftover struct {
	Kind                  engine.EventKind
	Payload               []byte
	VisibleAt, EnqueuedAt int64
}

// TakeLeftovers removes the messages of an instance whose execution ends
// and returns those the next execution is to get, oldest first: those
// engine.OutlivesExecution keeps (Leftovers). It reads what it deletes, in
// one statement, so that a message another host stores meanwhile is
// neither lost nor taken.
func (t Tx) TakeLeftovers(ctx context.Context, id string) ([]Leftover, error) {
	type message struct {
		Leftover
		id       int64
		outlives bool
	}
	rows, err := t.DB.Query(ctx, t.D.Rebind(`DELETE FROM messages WHERE instance_id = ? RETURNING id, payload, visible_at, enqueued_at`), id)
	t.D.messagesChanged(1)
	all, err := collect(rows, err, func(r Rows) (m message, err error) {
		if err := r.Scan(&m.id, &m.Payload, &m.VisibleAt, &m.EnqueuedAt); err != nil {
			return m, err
		}
		var ev engine.Event
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			return m, fmt.Errorf("decode message %d: %w", m.id, err)
		}
		m.Kind, m.outlives = ev.Kind, engine.OutlivesExecution(ev)
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	// RETURNING gives the rows in no promised order.
	slices.SortFunc(all, func(a, b message) int { return cmp.Compare(a.id, b.id) })
	var keep []Leftover
	for _, m := range all {
		if m.outlives {
			keep = append(keep, m.Leftover)
		}
	}
	return keep, nil
}

// Requeue enqueues again the leftovers TakeLeftovers took, as they were,
// in their order (Leftovers).
func (t Tx) Requeue(ctx context.Context, id string, left []Leftover) error {
	for _, m := range left {
		if err := t.DB.Send(ctx, t.D.InsertMessage, string(m.Kind), m.Payload, m.VisibleAt, m.EnqueuedAt, id); err != nil {
			return fmt.Errorf("requeue message: %w", err)
		}
		t.D.messagesChanged(1)
	}
	return nil
}

// Move puts the instance on m.To with m.Event its last event, its expired
// lock ended, with the activity tasks of its execution no worker holds at
// m.Now (OperateTx).
func (t Tx) Move(ctx context.Context, m store.Move, execution int64) error {
	err := t.send(ctx, `UPDATE instances SET module_hash = ?, last_event_id = ?, updated_at = ?`+t.D.EndLock+` WHERE id = ?`,
		m.To, m.Event.ID, Nanos(m.Now), m.InstanceID)
	if err != nil {
		return err
	}
	// Its activity tasks no worker holds go with it; one a worker runs
	// ends on the module it started on.
	return t.ExceptHeld(ctx, Nanos(m.Now), false, `UPDATE activity_tasks SET module_hash = ? WHERE instance_id = ? AND execution_id = ?`,
		m.To, m.InstanceID, execution)
}
