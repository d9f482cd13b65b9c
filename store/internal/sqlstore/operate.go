package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Current is what a move or a reset checks of an instance before it acts,
// as its store read it (and, where the database can, locked its row).
type Current struct {
	Module    string
	Status    engine.Status
	Execution int64
	// Last is the id of the execution's last event.
	Last int64
	// Locked says whether the instance has a lock token; LockedUntil is
	// when that lock expires (Unix nanoseconds).
	Locked      bool
	LockedUntil int64
}

// OperateTx is a store's statements for moving an instance to another
// module, in one transaction.
type OperateTx interface {
	// Current reads the instance; an error wrapping store.ErrNotFound
	// when there is none.
	Current(ctx context.Context, id string) (Current, error)
	// ModuleExists reports whether the module hash is deployed.
	ModuleExists(ctx context.Context, hash string) (bool, error)
	// AppendHistory appends events to an execution's history.
	AppendHistory(ctx context.Context, id string, execution int64, events []engine.Event) error
	// Move puts the instance on m.To with m.Event its last event, unlocked,
	// with the activity tasks of its execution no worker holds at m.Now.
	Move(ctx context.Context, m store.Move, execution int64) error
}

// ResetTx is a store's statements for resetting an instance, in one
// transaction.
type ResetTx interface {
	OperateTx
	Enqueuer
	// QueueActivities is TurnTx.QueueActivities.
	QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error
	Leftovers
	// Detach makes the parent's children of the given ids no longer
	// report to it.
	Detach(ctx context.Context, parent string, children []string) error
	// Restart drops the activity tasks of execution no worker holds and
	// sets the instance at execution+1 as r describes (Running, on
	// r.Module, with r.Kept its history), unlocked.
	Restart(ctx context.Context, r store.Reset, execution int64) error
	// Child reads how a child of parent stands; found is false when there
	// is no such child.
	Child(ctx context.Context, parent, id string) (c ChildState, found bool, err error)
	// Reattach makes a child report to its parent's event schedule.
	Reattach(ctx context.Context, child string, schedule int64) error
}

// ChildState is how a child instance stands, for a reset of its parent.
type ChildState struct {
	Status engine.Status
	Result json.RawMessage
	// Failure is the JSON of its failure (EncodeFailure), nil if none.
	Failure *string
}

// check returns store.ErrBusy if a turn holds the instance at now: a move
// or a reset must not happen then.
func (c Current) check(now time.Time) error {
	if c.Locked && c.LockedUntil > Nanos(now) {
		return fmt.Errorf("%w: a turn holds it until %s", store.ErrBusy, FromNanos(c.LockedUntil).Format(time.RFC3339Nano))
	}
	return nil
}

// expect returns ErrChanged unless the instance is in execution, with
// historyLen events.
func (c Current) expect(execution, historyLen int64) error {
	if c.Execution != execution || c.Last != historyLen {
		return fmt.Errorf("%w: its history went on (execution %d with %d events, where execution %d with %d was checked)",
			store.ErrChanged, c.Execution, c.Last, execution, historyLen)
	}
	return nil
}

// MoveInstance moves an instance, and its activity tasks no worker holds,
// to m.To and appends m.Event to its history, if the instance is as m
// expects and no turn holds it: the rules of store.Store.MoveInstance.
func MoveInstance(ctx context.Context, tx OperateTx, m store.Move) error {
	c, err := tx.Current(ctx, m.InstanceID)
	if err != nil {
		return err
	}
	if err := c.check(m.Now); err != nil {
		return err
	}
	switch {
	case c.Module != m.From:
		return fmt.Errorf("%w: it runs on module %s now, not %s", store.ErrChanged, c.Module, m.From)
	case c.Status.IsTerminal():
		return fmt.Errorf("%w: it has finished (%s)", store.ErrChanged, c.Status)
	}
	if err := c.expect(m.ExecutionID, m.HistoryLen); err != nil {
		return err
	}
	if m.Event.ID != c.Last+1 {
		return fmt.Errorf("the move's event has id %d where history continues at %d", m.Event.ID, c.Last+1)
	}
	if err := moduleDeployed(ctx, tx, m.To); err != nil {
		return err
	}
	if err := tx.AppendHistory(ctx, m.InstanceID, c.Execution, []engine.Event{m.Event}); err != nil {
		return err
	}
	return tx.Move(ctx, m, c.Execution)
}

// moduleDeployed returns an error wrapping store.ErrNotFound unless the
// module hash is deployed.
func moduleDeployed(ctx context.Context, tx OperateTx, hash string) error {
	ok, err := tx.ModuleExists(ctx, hash)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("module %s %w", hash, store.ErrNotFound)
	}
	return nil
}

// ResetInstance starts the next execution of an instance with the kept
// history, if the instance is as r expects and no turn holds it: the rules
// of store.Store.ResetInstance.
func ResetInstance(ctx context.Context, tx ResetTx, r store.Reset) error {
	c, err := tx.Current(ctx, r.InstanceID)
	if err != nil {
		return err
	}
	if err := c.check(r.Now); err != nil {
		return err
	}
	if err := c.expect(r.ExecutionID, r.HistoryLen); err != nil {
		return err
	}
	if err := moduleDeployed(ctx, tx, r.Module); err != nil {
		return err
	}
	left, err := tx.TakeLeftovers(ctx, r.InstanceID)
	if err != nil {
		return err
	}
	if len(r.Detach) > 0 {
		if err := tx.Detach(ctx, r.InstanceID, r.Detach); err != nil {
			return err
		}
	}
	next := c.Execution + 1
	if err := tx.Restart(ctx, r, c.Execution); err != nil {
		return err
	}
	if err := tx.AppendHistory(ctx, r.InstanceID, next, r.Kept); err != nil {
		return err
	}
	if err := tx.QueueActivities(ctx, r.InstanceID, next, r.Module, r.InFlight.Activities, r.Now); err != nil {
		return err
	}
	if err := tx.Enqueue(ctx, r.InstanceID, r.Marker, VisibleNow, r.Now); err != nil {
		return fmt.Errorf("the reset marker: %w", err)
	}
	for _, child := range r.InFlight.Children {
		if err := reportAgain(ctx, tx, r.InstanceID, child, r.Now); err != nil {
			return fmt.Errorf("child %q: %w", child.InstanceID, err)
		}
	}
	for _, ev := range r.Raise {
		if err := tx.Enqueue(ctx, r.InstanceID, ev, VisibleNow, r.Now); err != nil {
			return fmt.Errorf("raise %s again: %w", ev.Name, err)
		}
	}
	if err := tx.Requeue(ctx, r.InstanceID, left); err != nil {
		return err
	}
	return QueueTimers(ctx, tx, r.InstanceID, r.InFlight.Timers, r.Now)
}

// reportAgain makes a child the reset execution waits for report to it: at
// once if it has ended (its report went to the discarded events), when it
// ends if it runs. A child that no longer exists (purged) is
// engine.ChildGone.
func reportAgain(ctx context.Context, tx ResetTx, parent string, child engine.ChildTask, now time.Time) error {
	c, found, err := tx.Child(ctx, parent, child.InstanceID)
	if err != nil {
		return err
	}
	if !found {
		return tx.Enqueue(ctx, parent, engine.ChildGone(child.ScheduleID, child.InstanceID), VisibleNow, now)
	}
	if c.Status.IsTerminal() {
		return ReportToParent(ctx, tx, parent, child.ScheduleID, c.Status, c.Result, DecodeFailure(c.Failure), now)
	}
	return tx.Reattach(ctx, child.InstanceID, child.ScheduleID)
}
