package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/store"
)

// turn runs one turn of a locked instance and commits it. Guest calls run
// under a context that shutdown does not cancel, so a turn in progress
// finishes (within its activation deadline) instead of failing the
// instance.
func (h *Host) turn(ctx context.Context, item *store.WorkItem) {
	_, err := h.reg.module(context.WithoutCancel(ctx), item.Instance.ModuleHash)
	var p *guard.Panic
	switch {
	case errors.Is(err, api.ErrCannotRun):
		// This host cannot run the module: its fetches pass over it from
		// now on (refused.go), and the turn waits for a host that can.
		h.abandon(ctx, item.Instance.ID, item.LockToken)
		return
	case errors.As(err, &p):
		h.fail(ctx, item, p.Failure(panickedLoading))
		return
	}
	began := time.Now()
	sp := h.trace.turn(ctx, item)
	t := h.runTurn(ctx, item)
	if t != nil {
		h.committed(ctx, item, t, began)
	}
	h.trace.turnEnded(sp, t)
}

// ran is a turn that committed: what the engine made of it, and the
// children it started.
type ran struct {
	res      *engine.TurnResult
	children []store.NewChild
	// activities are the tasks the commit queued, on the queues the host
	// routed them to; handed counts those of the host's own queue that it
	// leased to this host's activity workers (handoff.go).
	activities []engine.ActivityTask
	handed     int
	// span is the turn's span when it runs in the commit of an activity's
	// outcome (handoffTurn); nil when tracing is off.
	span trace.Span
	// unkept is the live instance of a first turn (firstTurn), for its
	// caller to keep once the commit is in, or close; panicked, of a
	// first turn that did not commit, is the failure of the host's panic
	// running it.
	unkept   *live
	panicked *engine.Failure
}

// own counts the tasks the turn queued on the host's own queue.
func (t *ran) own() int {
	n := 0
	for _, a := range t.activities {
		if a.Queue == "" {
			n++
		}
	}
	return n
}

// runTurn runs the turn of item on its live instance and commits it. It
// returns nil when the turn did not commit: the instance is unlocked to
// run again, or failed, when running it again could only end the same
// way (it was delivered more than PoisonAfter times, a row it reads is
// corrupt, or the host panicked running it: then the panic and its stack
// are in the instance's history). On a store with handoffs, the commit
// leases to this host the tasks it queues for its idle activity workers,
// and hands them to them (handoff.go).
func (h *Host) runTurn(ctx context.Context, item *store.WorkItem) *ran {
	c, t := h.makeTurn(ctx, item, ownTurn)
	if c == nil {
		return nil
	}
	var err error
	if h.handoffs == nil {
		err = h.st.CommitTurn(ctx, *c)
	} else {
		places := h.tasks.reserve(t.own())
		var ws []*store.ActivityWork
		ws, err = h.handoffs.CommitTurnLeasing(ctx, *c, h.opts.Lease, places)
		t.handed = h.handTasks(places, ws, c.Now)
	}
	if err != nil {
		// The guest is ahead of what is persisted: start afresh next time.
		h.cache.drop(context.WithoutCancel(ctx), item.Instance.ID)
		h.unlock(ctx, item, "turn not committed", err)
		return nil
	}
	return t
}

// turnMode is where makeTurn's turn commits, which decides what it may do.
type turnMode int

const (
	// ownTurn commits in a transaction of its own (runTurn): makeTurn
	// itself fails, unlocks or refuses the instance when the turn cannot
	// commit.
	ownTurn turnMode = iota
	// heldTurn runs inside a store transaction that holds the instance
	// (store.Handoff.CompleteAndTurn), which it must not call: it runs
	// only a turn it can run without the store (the instance live in
	// memory, starting no child), and otherwise returns nil and leaves
	// the instance as it was, for a turn of its own.
	heldTurn
	// firstTurn is a new instance's first turn, run before the instance
	// is written, to commit with it (store.Handoff.CreateAndTurn): it
	// runs on a fresh instance, reading no history, and when the turn
	// cannot commit it returns nil, for the instance to be created as
	// usual and its turn to run as its own; when the host panicked
	// running it, also a ran whose panicked says so, for the caller to
	// fail the instance as a turn of its own would. The live instance is
	// not kept: ran.unkept holds it, for the caller to keep once the
	// commit is in (no turn of another instance of the same id may find
	// it in the cache before the commit proves the id new).
	firstTurn
)

// What an instance fails with when the host panicked loading its module,
// or running its turn.
const (
	panickedLoading = "durabox gave up on the instance: the host panicked loading its module"
	panickedTurn    = "durabox gave up on the instance: the host panicked running its turn"
)

// makeTurn runs the turn of item on its live instance and returns its
// commit, and what ran, or nil when the turn cannot commit (runTurn;
// mode says what else it does then).
func (h *Host) makeTurn(ctx context.Context, item *store.WorkItem, mode turnMode) (c *store.TurnCommit, t *ran) {
	inst := item.Instance
	guestCtx := context.WithoutCancel(ctx)
	own := mode == ownTurn
	var l *live
	defer h.guard.Catch(guard.Turn, func(p *guard.Panic) {
		if l != nil {
			l.close(guestCtx)
		}
		c, t = nil, nil
		switch mode {
		case ownTurn:
			h.fail(ctx, item, p.Failure(panickedTurn))
		case firstTurn:
			t = &ran{panicked: p.Failure(panickedTurn)}
		}
	}, "instance", inst.ID)
	if item.Attempt > h.opts.PoisonAfter {
		if own {
			h.fail(ctx, item, &engine.Failure{Message: fmt.Sprintf("durabox gave up on the instance: its turn was started %d times and never committed; "+
				"each time the host crashed, was killed or lost the instance's lock before the commit (the host's log tells what it was doing)", item.Attempt-1)})
		}
		return nil, nil
	}
	in := engine.TurnInput{Now: h.opts.Clock(), Execution: inst.ExecutionID, MaxPersistentEvents: h.opts.MaxPersistentEvents,
		HistoryWarning: int64(h.opts.HistoryWarning)}
	for _, m := range item.Messages {
		if m.Corrupt != nil {
			// Running the turn again would read the same row.
			if own {
				h.fail(ctx, item, &engine.Failure{Message: "durabox cannot read a message for the instance: " + m.Corrupt.Error()})
			}
			return nil, nil
		}
		in.Messages = append(in.Messages, m.Event)
	}
	if mode != firstTurn {
		l = h.cache.take(inst.ID)
	}
	switch {
	case l != nil && l.continues(item):
		h.metrics.CacheHit()
	case mode == heldTurn:
		if l != nil {
			h.cache.putBack(guestCtx, inst.ID, l)
		}
		return nil, nil
	default:
		if l != nil {
			l.close(guestCtx)
		}
		if l = h.fresh(ctx, item, in.Messages); l == nil {
			return nil, nil
		}
	}
	in.History = l.history
	guard.MayPanic(guard.PointTurn, inst.ID)
	res, err := l.turn(in)
	if errors.Is(err, engine.ErrCorruptHistory) {
		// Running the turn again would read the same history: the instance
		// fails at once, with what is wrong with it.
		l.close(guestCtx)
		if own {
			h.fail(ctx, item, &engine.Failure{Message: err.Error()})
		}
		return nil, nil
	}
	if err != nil {
		l.close(guestCtx)
		if own {
			h.unlock(ctx, item, "turn refused", err)
		}
		return nil, nil
	}
	if res.Rejected != nil {
		// The guest applied the refused update: it runs no more.
		l.close(guestCtx)
		if own {
			h.refuse(ctx, item, res.Rejected, in.Now)
		}
		return nil, nil
	}
	if mode == heldTurn && len(res.Children) > 0 {
		// Choosing their modules may read the store.
		l.close(guestCtx)
		return nil, nil
	}
	children, err := h.children(ctx, inst.ModuleHash, res.Children)
	if err != nil {
		l.close(guestCtx)
		if own {
			h.unlock(ctx, item, "turn not committed", err)
		}
		return nil, nil
	}
	var unkept *live
	if mode == firstTurn {
		unkept = l
	} else {
		h.keep(guestCtx, inst.ID, l, res, in.Now)
	}
	l = nil // the cache has it now, or it is closed, or the caller keeps it
	commit := commitOf(item, in.Now, res, children)
	commit.MaxPersistentEvents, commit.Activities = h.opts.MaxPersistentEvents, h.route(commit.Activities)
	return &commit, &ran{res: res, children: children, activities: commit.Activities, unkept: unkept}
}

// committed does what follows the commit of turn t of item, begun at
// began: it counts and logs it, stops the activity attempts nobody will
// take, and announces what the turn changed. A panic here leaves the turn
// as committed, and announces everything.
func (h *Host) committed(ctx context.Context, item *store.WorkItem, t *ran, began time.Time) {
	inst, res := item.Instance, t.res
	defer h.guard.Catch(guard.Turn, func(*guard.Panic) {
		h.orchestrationWork.Notify()
		h.activityWork.Notify()
		h.changed.notify(inst.ID)
	}, "instance", inst.ID, "committed", true)
	guard.MayPanic(guard.PointTurnCommitted, inst.ID)
	h.metrics.Turn(inst.Name, time.Since(began), res.Status)
	if w := int64(h.opts.HistoryWarning); item.HistoryLen <= w && item.HistoryLen+int64(len(res.NewEvents)) > w {
		h.opts.Logger.Warn("history past the warning length", "instance", inst.ID, "execution", inst.ExecutionID,
			"events", item.HistoryLen+int64(len(res.NewEvents)), "warning", w)
	}
	h.stopAttempts(inst, res)
	if res.Status.IsTerminal() {
		h.trace.ended(ctx, inst, res.Status, res.Failure)
	}
	for _, c := range t.children {
		h.metrics.Started(c.Name)
	}
	for _, ev := range res.NewEvents {
		switch {
		case ev.Kind == engine.UpdateAccepted:
			h.metrics.Update("accepted")
		case ev.Kind == engine.UpdateCompleted && ev.Failure != nil:
			h.metrics.Update("failed")
		case ev.Kind == engine.UpdateCompleted:
			h.metrics.Update("completed")
		}
	}
	for _, d := range res.Dropped {
		h.opts.Logger.Warn("message dropped", "instance", inst.ID, "kind", d.Message.Kind, "name", d.Message.Name, "scheduleId", d.Message.ScheduleID, "reason", d.Reason)
	}
	if res.Err != nil {
		h.opts.Logger.Warn("instance failed", "instance", inst.ID, "err", res.Err)
	}
	if res.ContinueAsNew != nil {
		h.orchestrationWork.Notify()
	}
	// Once for the host's own activity workers (unless the commit handed
	// them every task it queued there), and once for the polls of each
	// task queue, however many tasks the turn queued there.
	notified := map[string]bool{"": t.handed == t.own()}
	for _, a := range t.activities {
		switch {
		case notified[a.Queue]:
		case a.Queue == "":
			h.activityWork.Notify()
		default:
			h.queues.queued.notify(a.Queue)
		}
		notified[a.Queue] = true
	}
	// An end makes work for the fetcher only when it tells a parent (the
	// messages that came for the instance meanwhile, the next fetch
	// drops): one that tells none, a hello's, woke it to fetch nothing.
	made := len(res.Timers) > 0 || len(t.children) > 0 || len(res.Raises) > 0 || len(res.CancelChildren) > 0 || len(res.TerminateChildren) > 0
	if res.Status.IsTerminal() {
		made = made || inst.ParentID != ""
	} else {
		made = made || h.workLeft(ctx, inst.ID)
	}
	if made {
		h.orchestrationWork.Notify()
	}
	if res.Status.IsTerminal() {
		h.changed.notify(inst.ID)
	} else {
		h.changed.progressed(inst.ID)
	}
}

// keep puts l, which ran the turn res of instance id to commit at now,
// back in the cache for the instance's next turn, or closes it when there
// is none: the
// instance finished (the turn holds its only copy: it took it from the
// cache), or continued as new (its next execution starts on a fresh guest,
// with its own seed). It runs before the turn's commit, which is what
// lets the next turn run, perhaps on another worker: that turn finds l in
// the cache, and no put can come after it and keep a copy it made stale
// or finished.
func (h *Host) keep(ctx context.Context, id string, l *live, res *engine.TurnResult, now time.Time) {
	if res.ContinueAsNew != nil || res.Status.IsTerminal() {
		l.close(ctx)
		return
	}
	l.extend(res.NewEvents)
	l.committedAt = now
	h.cache.put(ctx, id, l)
}

// stopAttempts stops the activity attempts whose result nobody will take
// after the turn res of inst: all of its execution's, when it ended, and
// those of the activities it cancelled.
func (h *Host) stopAttempts(inst store.Instance, res *engine.TurnResult) {
	switch {
	case res.Status.IsTerminal():
		h.attempts.stop(attemptKey{inst.ID, inst.ExecutionID, 0}, &stoppedError{why: "its instance is " + string(res.Status)})
		return
	case res.ContinueAsNew != nil:
		h.attempts.stop(attemptKey{inst.ID, inst.ExecutionID, 0}, &stoppedError{why: "its execution continued as new"})
		return
	}
	for _, ev := range res.NewEvents {
		if ev.Kind == engine.ActivityCancelRequested {
			h.attempts.stop(attemptKey{inst.ID, inst.ExecutionID, ev.ScheduleID}, &stoppedError{why: "the orchestration cancelled it"})
		}
	}
}

// commitOf is the commit of the turn res of item at now, which consumes
// all its messages and starts children.
func commitOf(item *store.WorkItem, now time.Time, res *engine.TurnResult, children []store.NewChild) store.TurnCommit {
	c := store.TurnCommit{
		InstanceID: item.Instance.ID, ExecutionID: item.Instance.ExecutionID, LockToken: item.LockToken, Now: now,
		NewEvents: res.NewEvents, Activities: res.Activities, Timers: res.Timers,
		Status: res.Status, Result: res.Result, Failure: res.Failure,
		ContinueAsNew: res.ContinueAsNew, Children: children, CustomStatus: res.CustomStatus, Outgoing: outgoing(item.Instance.ID, res),
		Raises:      res.Raises,
		Attributes:  res.Attributes,
		DropWaiting: res.Status == engine.StatusTerminated,
		WaitingOn:   res.WaitingOn, Waits: res.Waits,
	}
	for _, m := range item.Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	return c
}

// workLeft reports whether the instance has messages that came while its
// turn held it (a raised event, an activity's result, a timer come due):
// they were announced when no one could take them, so they must be
// announced again. When the store cannot tell, it reports true.
func (h *Host) workLeft(ctx context.Context, id string) bool {
	more, err := h.st.HasWork(ctx, id, h.opts.Clock())
	return more || err != nil
}

// fail fails a locked instance whose turn cannot run, consuming its
// messages, with the engine's GiveUp: its turn was delivered more than
// PoisonAfter times without being committed (poison), its history or a
// message does not decode or is corrupt, or the host panicked running it.
func (h *Host) fail(ctx context.Context, item *store.WorkItem, failure *engine.Failure) {
	c := h.failing(item, failure)
	h.cache.drop(context.WithoutCancel(ctx), item.Instance.ID)
	if err := h.st.CommitTurn(ctx, c); err != nil {
		h.unlock(ctx, item, "cannot fail an instance whose turn cannot run", err)
		return
	}
	h.failed(ctx, item, failure)
}

// failing is the commit that fails the instance of item with failure, in
// place of a turn that cannot run.
func (h *Host) failing(item *store.WorkItem, failure *engine.Failure) store.TurnCommit {
	now := h.opts.Clock()
	return commitOf(item, now, engine.GiveUp(item.HistoryLen, now, failure), nil)
}

// failed tells that the commit of failing failed the instance of item.
func (h *Host) failed(ctx context.Context, item *store.WorkItem, failure *engine.Failure) {
	h.metrics.Failed(item.Instance.Name)
	h.trace.ended(ctx, item.Instance, engine.StatusFailed, failure)
	h.opts.Logger.Error("instance failed: its turn cannot run", "instance", item.Instance.ID, "failure", failure.Message)
	h.orchestrationWork.Notify()
	h.changed.notify(item.Instance.ID)
}

// fresh starts a live instance for the turn of item, whose messages are
// messages, with the persisted history of its current execution to
// replay, drawing from the execution's seed. It returns nil when the
// history cannot be read: the instance is then failed, when a row of it is
// corrupt, or unlocked, to run again.
func (h *Host) fresh(ctx context.Context, item *store.WorkItem, messages []engine.Event) *live {
	inst := item.Instance
	// The history is in the store, unless the execution has not begun.
	var history []engine.Event
	if item.HistoryLen > 0 {
		h.metrics.CacheMiss()
		var err error
		history, err = h.st.History(ctx, inst.ID, inst.ExecutionID)
		switch {
		case errors.Is(err, store.ErrCorrupt):
			// Reading it again would read the same row.
			h.fail(ctx, item, &engine.Failure{Message: "durabox cannot read the instance's history: " + err.Error()})
			return nil
		case err != nil:
			h.unlock(ctx, item, "turn not run", err)
			return nil
		}
	}
	l := h.newLive(context.WithoutCancel(ctx), inst, Seed(inst.ID, inst.ExecutionID, history, messages[:min(len(messages), 1)]))
	l.extend(history)
	return l
}

// children chooses the module of each child: the parent's if it registers
// the child's orchestration (so a parent and its children stay one
// version), else the newest module that does, else none (the child then
// fails to start).
func (h *Host) children(ctx context.Context, parentHash string, tasks []engine.ChildTask) ([]store.NewChild, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	parent, err := h.reg.module(ctx, parentHash)
	if err != nil {
		return nil, err
	}
	var out []store.NewChild
	for _, c := range tasks {
		hash := parentHash
		if !slices.Contains(parent.orchestrations, c.Name) {
			hash, err = h.st.ModuleFor(ctx, c.Name)
			if errors.Is(err, store.ErrNotFound) {
				hash, err = "", nil
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, store.NewChild{ID: c.InstanceID, Name: c.Name, ModuleHash: hash, Input: c.Input, ScheduleID: c.ScheduleID, Detached: c.Detached})
	}
	return out, nil
}

// outgoing asks the children whose futures a turn cancelled to stop, and
// ends those of a parent the turn terminated.
func outgoing(parent string, res *engine.TurnResult) []store.Outgoing {
	var out []store.Outgoing
	for _, id := range res.CancelChildren {
		out = append(out, store.Outgoing{InstanceID: id, Event: engine.Event{Kind: engine.OrchestrationCancelRequested, Reason: fmt.Sprintf("its parent %s cancelled it", parent)}})
	}
	for _, id := range res.TerminateChildren {
		out = append(out, store.Outgoing{InstanceID: id, Event: engine.Event{Kind: engine.OrchestrationTerminated, Reason: fmt.Sprintf("its parent %s was terminated", parent)}})
	}
	return out
}

// unlock unlocks an instance whose turn did not commit (what says how it
// went), to run again, and logs why: at ERROR, or at INFO when the host's
// stop cut the turn short, which is no failure.
func (h *Host) unlock(ctx context.Context, item *store.WorkItem, what string, err error) {
	h.noteUnwritable(err)
	if cutShort(ctx, err) {
		h.opts.Logger.Info(what+": the host is stopping; it runs again at the next start", "instance", item.Instance.ID, "err", err)
	} else {
		h.opts.Logger.Error(what+"; it will run again", "instance", item.Instance.ID, "err", err)
	}
	h.abandon(ctx, item.Instance.ID, item.LockToken)
}

func (h *Host) abandon(ctx context.Context, id, token string) {
	if err := h.st.AbandonInstance(context.WithoutCancel(ctx), id, token); err != nil {
		h.noteUnwritable(err)
		h.opts.Logger.Error("cannot unlock instance", "instance", id, "err", err)
	}
}
