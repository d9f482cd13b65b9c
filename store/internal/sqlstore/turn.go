package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Locked is what a commit needs to know of the instance it commits, as its
// store read it in the commit's transaction.
type Locked struct {
	// Token is the instance's lock token, nil when it is not locked.
	Token *string
	// Execution is the instance's current execution.
	Execution int64
	// LastEventID is the id of the execution's last event in history.
	LastEventID int64
	// ModuleHash is the module the instance runs on.
	ModuleHash string
	// Parent is the instance's parent, nil when it has none.
	Parent *string
	// ParentSchedule is the parent's event the instance reports its end
	// to, nil when it does not report.
	ParentSchedule *int64
}

// Enqueuer is a store's statement that adds a message for an instance,
// visible from visibleAt (Unix nanoseconds), stored at now; it drops the
// message when the instance does not exist.
type Enqueuer interface {
	Enqueue(ctx context.Context, id string, ev engine.Event, visibleAt int64, now time.Time) error
}

// Leftovers is a store's statements for the messages an ended execution
// left.
type Leftovers interface {
	// TakeLeftovers removes the instance's messages and returns those
	// engine.OutlivesExecution keeps, oldest first.
	TakeLeftovers(ctx context.Context, id string) ([]Leftover, error)
	// Requeue enqueues again the leftovers TakeLeftovers took, as they
	// were, in their order.
	Requeue(ctx context.Context, id string, left []Leftover) error
}

// TurnTx is a store's statements for committing a turn, all in the one
// transaction of the commit.
type TurnTx interface {
	Leftovers
	// EnqueueTx delivers the turn's raises, checking their targets as
	// Enqueue and EnqueuePersistent do.
	EnqueueTx
	// Locked reads the instance's lock and position; an error wrapping
	// store.ErrNotFound when there is no such instance.
	Locked(ctx context.Context, id string) (Locked, error)
	// AppendHistory appends events to an execution's history.
	AppendHistory(ctx context.Context, id string, execution int64, events []engine.Event) error
	// QueueActivities queues activity tasks of an execution at now, to run
	// on moduleHash, in the fair order store.Store.LockNextActivities
	// describes.
	QueueActivities(ctx context.Context, id string, execution int64, moduleHash string, tasks []engine.ActivityTask, now time.Time) error
	// Consume removes the instance's messages of the given ids.
	Consume(ctx context.Context, id string, messages []int64) error
	// InsertChild creates a child instance of parent, reporting to the
	// parent's event schedule unless that is nil, with its start among
	// the starts, in their fair order (Dialect.InsertStart). It returns store.ErrInstanceExists when the id is taken and
	// an error wrapping store.ErrNotFound when the module is not deployed,
	// and leaves the transaction usable after either.
	InsertChild(ctx context.Context, n store.NewInstance, parent string, schedule *int64) error
	// DropWaiting removes the instance's messages and the activity tasks
	// no worker holds at now.
	DropWaiting(ctx context.Context, id string, now time.Time) error
	// DropRetries removes the execution's activity tasks waiting for a
	// retry that no worker holds at now: all of them when all, else those
	// of the activities scheduled by the events schedules.
	DropRetries(ctx context.Context, id string, execution int64, schedules []int64, all bool, now time.Time) error
	// NextExecution ends the instance's execution c.ExecutionID and sets
	// it at the next one, Pending with c.ContinueAsNew's input and no
	// history and no search attributes, unlocked: the ended execution's
	// children no longer report,
	// its activity tasks not yet leased are dropped, and when it ended is
	// recorded.
	NextExecution(ctx context.Context, c store.TurnCommit) error
	// SetAttributes writes the turn's search attributes: each replaces
	// the one of its name, a removed one only deletes it.
	SetAttributes(ctx context.Context, id string, attrs []abi.Attribute) error
	// AnswerUpdates brings the instance's updates to what the commit
	// records (store.TurnCommit.Refused).
	AnswerUpdates(ctx context.Context, c store.TurnCommit) error
	// Finish records the turn's outcome in the instance's row (status,
	// result, failure, custom status, lastEventID, persistent events
	// taken) and unlocks it.
	Finish(ctx context.Context, c store.TurnCommit, lastEventID int64, persistentTaken int) error
}

// CommitTurn checks c against the instance tx locked and writes it: the
// rules of store.Store.CommitTurn. It returns an error wrapping
// store.ErrLeaseLost if c.LockToken no longer holds the instance's lock.
func CommitTurn(ctx context.Context, tx TurnTx, c store.TurnCommit) error {
	l, err := tx.Locked(ctx, c.InstanceID)
	if err != nil {
		return err
	}
	if l.Token == nil || *l.Token != c.LockToken {
		return fmt.Errorf("%w: the instance is not locked with this token", store.ErrLeaseLost)
	}
	if c.ExecutionID != l.Execution {
		return fmt.Errorf("execution %d is not the instance's current one, %d", c.ExecutionID, l.Execution)
	}
	if c.Now.IsZero() {
		return errors.New("the commit has no time (TurnCommit.Now is zero)")
	}
	for i, ev := range c.NewEvents {
		if want := l.LastEventID + int64(i) + 1; ev.ID != want {
			return fmt.Errorf("new event %d has id %d where history continues at %d", i, ev.ID, want)
		}
	}
	if err := writeWork(ctx, tx, c, l.ModuleHash); err != nil {
		return err
	}
	if err := tx.AnswerUpdates(ctx, c); err != nil {
		return fmt.Errorf("updates: %w", err)
	}
	for _, child := range c.Children {
		if err := startChild(ctx, tx, c.InstanceID, child, c.Now); err != nil {
			return fmt.Errorf("child %q: %w", child.ID, err)
		}
	}
	for _, o := range c.Outgoing {
		if err := tx.Enqueue(ctx, o.InstanceID, o.Event, VisibleNow, c.Now); err != nil {
			return fmt.Errorf("message for %q: %w", o.InstanceID, err)
		}
	}
	for _, r := range c.Raises {
		if err := deliverRaise(ctx, tx, c.InstanceID, r, cmp.Or(c.MaxPersistentEvents, engine.MaxPersistentEvents), c.Now); err != nil {
			return fmt.Errorf("event %q raised at %q: %w", r.Name, r.InstanceID, err)
		}
	}
	if c.DropWaiting {
		if err := tx.DropWaiting(ctx, c.InstanceID, c.Now); err != nil {
			return err
		}
	}
	var cancelled []int64
	for _, ev := range c.NewEvents {
		if ev.Kind == engine.ActivityCancelRequested {
			cancelled = append(cancelled, ev.ScheduleID)
		}
	}
	if err := tx.DropRetries(ctx, c.InstanceID, c.ExecutionID, cancelled, c.Status.IsTerminal(), c.Now); err != nil {
		return fmt.Errorf("drop retries: %w", err)
	}
	if err := tx.SetAttributes(ctx, c.InstanceID, c.Attributes); err != nil {
		return err
	}
	if c.ContinueAsNew != nil {
		if c.ContinueAsNew.Started.Kind != engine.OrchestrationStarted {
			return errors.New("the continue-as-new has no OrchestrationStarted to begin the next execution (ContinueAsNew.Started)")
		}
		return continueAsNew(ctx, tx, c)
	}
	if c.Status.IsTerminal() && l.Parent != nil && l.ParentSchedule != nil {
		if err := ReportToParent(ctx, tx, *l.Parent, *l.ParentSchedule, c.Status, c.Result, c.Failure, c.Now); err != nil {
			return err
		}
	}
	return tx.Finish(ctx, c, l.LastEventID+int64(len(c.NewEvents)), PersistentTaken(c.NewEvents))
}

// PersistentTaken counts the persistent events among events.
func PersistentTaken(events []engine.Event) int {
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
func writeWork(ctx context.Context, tx TurnTx, c store.TurnCommit, moduleHash string) error {
	if err := tx.AppendHistory(ctx, c.InstanceID, c.ExecutionID, c.NewEvents); err != nil {
		return err
	}
	if err := tx.QueueActivities(ctx, c.InstanceID, c.ExecutionID, moduleHash, c.Activities, c.Now); err != nil {
		return err
	}
	if err := QueueTimers(ctx, tx, c.InstanceID, c.Timers, c.Now); err != nil {
		return err
	}
	if len(c.Consumed) > 0 {
		return tx.Consume(ctx, c.InstanceID, c.Consumed)
	}
	return nil
}

// unwrittenStart is the id of the start message of FirstTurn's work
// item, which no row of messages has: their ids are positive, and the
// results a store hands a turn unwritten are negative.
const unwrittenStart = 0

// FirstTurn is the first turn of n that next makes of its work item,
// before n is written (store.Handoff.CreateAndTurn), and the max next
// returns with it; nil when next declines. The work item is what
// CreateLocked would return: locked with a new token, its one message n's
// start, decoded from the payload a stored one would have (so the turn
// sees what a turn of the stored start sees), with an id no row has. The
// turn returned does not list that message among those it consumed;
// consumed says whether it did, so that the start is written with the
// instance when it did not. Its error, when the start cannot be encoded,
// names the instance.
func FirstTurn(n store.NewInstance, next func(*store.WorkItem) (*store.TurnCommit, int)) (turn *store.TurnCommit, max int, consumed bool, err error) {
	start := StartOf(n)
	payload, err := json.Marshal(start)
	if err != nil {
		return nil, 0, false, fmt.Errorf("create instance %q: encode its %s message: %w", n.ID, start.Kind, err)
	}
	m := Message(unwrittenStart, payload)
	if m.Corrupt != nil {
		return nil, 0, false, fmt.Errorf("create instance %q: %w", n.ID, m.Corrupt)
	}
	at := FromNanos(Nanos(n.Now))
	c, max := next(&store.WorkItem{
		Instance: store.Instance{ID: n.ID, Name: n.Name, ModuleHash: n.ModuleHash, ExecutionID: 1, Status: engine.StatusPending,
			Input: n.Input, CreatedAt: at, UpdatedAt: at},
		Attempt: 1, Messages: []store.Message{m}, LockToken: NewToken()})
	if c == nil {
		return nil, 0, false, nil
	}
	t := *c
	if i := slices.Index(t.Consumed, unwrittenStart); i >= 0 {
		t.Consumed, consumed = slices.Delete(slices.Clone(t.Consumed), i, i+1), true
	}
	return &t, max, consumed, nil
}

// ToLease returns what a commit that leases (store.Handoff.CommitTurnLeasing)
// leases of c: the schedule ids of up to max of the tasks c queues on the
// host's own queue, in c's order, and how many it queues there in all;
// none when c ends its execution or continues it as new.
func ToLease(c store.TurnCommit, max int) (schedules []int64, own int) {
	if c.ContinueAsNew != nil || c.Status.IsTerminal() {
		return nil, 0
	}
	for _, a := range c.Activities {
		if a.Queue == "" {
			if own++; len(schedules) < max {
				schedules = append(schedules, a.ScheduleID)
			}
		}
	}
	return schedules, own
}

// QueueTimers enqueues the engine's TimerFired of each timer at now,
// visible when due.
func QueueTimers(ctx context.Context, q Enqueuer, id string, timers []engine.TimerTask, now time.Time) error {
	for _, t := range timers {
		if err := q.Enqueue(ctx, id, t.Fired(), DueAt(t.FireAt), now); err != nil {
			return fmt.Errorf("timer %d: %w", t.ScheduleID, err)
		}
	}
	return nil
}

// ReportToParent tells the parent of a child that has ended how it ended,
// at now, in the engine's words.
func ReportToParent(ctx context.Context, q Enqueuer, parent string, schedule int64, status engine.Status, result []byte, failure *engine.Failure, now time.Time) error {
	if err := q.Enqueue(ctx, parent, engine.Report(schedule, status, result, failure), VisibleNow, now); err != nil {
		return fmt.Errorf("report to parent %q: %w", parent, err)
	}
	return nil
}

// startChild creates a child instance at now or, when it cannot start,
// reports the failure to its parent at once (unless it is detached), as
// engine.ChildNotStarted words it.
func startChild(ctx context.Context, tx TurnTx, parent string, c store.NewChild, now time.Time) error {
	var schedule *int64
	if !c.Detached {
		schedule = &c.ScheduleID
	}
	reason := fmt.Sprintf("no deployed module registers orchestration %q", c.Name)
	if c.ModuleHash != "" {
		n := store.NewInstance{ID: c.ID, Name: c.Name, ModuleHash: c.ModuleHash, Input: c.Input, Now: now}
		err := tx.InsertChild(ctx, n, parent, schedule)
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
	return tx.Enqueue(ctx, parent, engine.ChildNotStarted(c.ScheduleID, c.Name, reason), VisibleNow, now)
}

// deliverRaise delivers the event the instance sender raised at now to its
// target, under the rules of store.Store.Enqueue and EnqueuePersistent, and
// tells the sender the outcome, as the engine words it (limit: the
// persistent events an execution takes): a target that does
// not exist, has finished or takes no more persistent events is an outcome,
// and only the store's own failures end the commit.
func deliverRaise(ctx context.Context, tx TurnTx, sender string, r engine.RaiseTask, limit int, now time.Time) error {
	max := 0
	if r.Persistent {
		max = limit
	}
	outcome := r.Delivered()
	err := EnqueueFor(ctx, tx, r.InstanceID, r.Message(), max, now)
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		outcome = r.NotDelivered("no such instance exists")
	case errors.Is(err, store.ErrFinished), errors.Is(err, store.ErrTooManyEvents):
		// EnqueueFor's words: "instance finished: it is Completed", "too
		// many persistent events: its execution has taken …".
		outcome = r.NotDelivered(err.Error())
	default:
		return err
	}
	return tx.Enqueue(ctx, sender, outcome, VisibleNow, now)
}

// continueAsNew ends the instance's execution and starts the next one,
// whose messages are the engine's Started and Carried, followed by the
// messages the ended execution left that engine.OutlivesExecution keeps.
func continueAsNew(ctx context.Context, tx TurnTx, c store.TurnCommit) error {
	can := c.ContinueAsNew
	left, err := tx.TakeLeftovers(ctx, c.InstanceID)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	if err := tx.NextExecution(ctx, c); err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	for _, m := range append([]engine.Event{can.Started}, can.Carried...) {
		if err := tx.Enqueue(ctx, c.InstanceID, m, VisibleNow, c.Now); err != nil {
			return fmt.Errorf("continue as new: %w", err)
		}
	}
	if err := tx.Requeue(ctx, c.InstanceID, left); err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	return nil
}

// LeaseLost is the error of the store named db doing what to the activity
// task w once its lease no longer holds it ("complete", "retry"…). It is
// made only when it is returned: the paths that succeed are a fan-out's
// every task.
func LeaseLost(db, what string, w *store.ActivityWork) error {
	return fmt.Errorf("%s: %s activity %d (%q of %q): %w: it was handed to another worker or completed", db, what, w.ID, w.Task.Name, w.InstanceID, store.ErrLeaseLost)
}
