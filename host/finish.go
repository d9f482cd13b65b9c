package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/store"
)

// finish ends an attempt of the activity task w, leased by this host or
// by a worker outside it, with its outcome o: when the attempt failed and
// the call's retry policy allows another (engine.RetryPolicy.Next), it
// lets the task go, to run again after the policy's wait, and records
// nothing in history; otherwise it records the outcome, for the
// instance's next turn, with the number of attempts when the call has a
// policy. An attempt's timeout is a failure like any other; an outcome
// marked final, or one of an execution that has ended, is never retried.
// Every attempt, wherever it ran, ends here. It returns why the store did
// not take the outcome (store.ErrLeaseLost when the lease no longer held
// the task), for the caller to log or answer. A panic is logged, and
// returns nil: the outcome may have been recorded; if not, the task is
// delivered again when its lease ends.
func (h *Host) finish(ctx context.Context, w *store.ActivityWork, o outcome) error {
	_, err := h.finishOwn(ctx, w, o, false)
	return err
}

// finishOwn is finish; with chain set, for an attempt this host ran, on
// a store with handoffs, the outcome commits with the instance's next
// turn when it can (handoffTurn), and it returns the first task that turn
// leased to this host, for the worker that ran w to run next.
func (h *Host) finishOwn(ctx context.Context, w *store.ActivityWork, o outcome, chain bool) (next *leasedTask, err error) {
	defer h.guard.Catch(guard.Activity, func(*guard.Panic) { next, err = nil, nil; h.orchestrationWork.Notify() }, "instance", w.InstanceID, "activity", w.Task.Name)
	now := h.opts.Clock()
	attempt := w.Failures + 1
	if wait, retry := nextAttempt(w, o); retry && h.wanted(ctx, w) {
		if err := h.st.RetryActivity(ctx, w, o.result.Failure, now.Add(wait)); err != nil {
			return nil, fmt.Errorf("activity retry not recorded: %w", err)
		}
		h.opts.Logger.Info("activity attempt failed; it runs again", "instance", w.InstanceID, "activity", w.Task.Name, "scheduleId", w.Task.ScheduleID,
			"attempt", attempt, "in", wait, "failure", o.result.Failure.Message)
		h.metrics.Activity(w.Task.Name, o.result.Kind, o.ran)
		h.activityWork.Notify()
		if w.Task.Queue != "" {
			h.queues.queued.notify(w.Task.Queue)
		}
		return nil, nil
	}
	result := o.result
	if w.Task.Retry != nil {
		result.Attempts = int64(attempt)
	}
	turned := false
	if chain && h.handoffs != nil && w.Task.Queue == "" {
		turned, next, err = h.handoffTurn(ctx, w, result, now)
	} else {
		err = h.st.CompleteActivity(ctx, w, result, now)
	}
	if err != nil {
		h.noteUnwritable(err)
		return nil, fmt.Errorf("activity result not recorded: %w", err)
	}
	guard.MayPanic(guard.PointActivityDone, w.InstanceID)
	h.metrics.Activity(w.Task.Name, result.Kind, o.ran)
	if !turned {
		h.orchestrationWork.Notify()
	}
	return next, nil
}

// handoffTurn records result, the outcome of w at now, with its
// instance's next turn, in one commit (store.Handoff.CompleteAndTurn),
// when this host has the instance live in memory and nobody runs a turn
// of it; otherwise only the outcome, as CompleteActivity does, for a turn
// of its own. It reports whether the turn committed, and returns the
// first task the turn leased to this host, for the worker that ran w to
// run next: the others go to the idle activity workers.
func (h *Host) handoffTurn(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time) (turned bool, first *leasedTask, err error) {
	var (
		item   *store.WorkItem
		t      *ran
		began  time.Time
		at     time.Time // the turn's
		places int       // reserved for the tasks past the first
	)
	next := func(it *store.WorkItem) (*store.TurnCommit, int) {
		h.tasks.give(places)
		places = 0
		if t != nil {
			// The transaction runs again: the turn it ran first is not
			// committed, and its guest is ahead of the store.
			h.cache.drop(context.WithoutCancel(ctx), w.InstanceID)
			h.trace.turnEnded(t.span, nil)
			t = nil
			return nil, 0
		}
		began = time.Now()
		sp := h.trace.turn(ctx, it)
		c, made := h.makeTurn(ctx, it, heldTurn)
		if c == nil {
			h.trace.turnEnded(sp, nil)
			return nil, 0
		}
		made.span = sp
		item, t, at = it, made, c.Now
		own := made.own()
		if own == 0 {
			return c, 0
		}
		places = h.tasks.reserve(own - 1)
		return c, places + 1
	}
	turned, ws, err := h.handoffs.CompleteAndTurn(ctx, w, result, now, h.opts.Lease, next)
	if err != nil || !turned {
		if t != nil {
			h.cache.drop(context.WithoutCancel(ctx), w.InstanceID)
			h.trace.turnEnded(t.span, nil)
		}
		h.tasks.give(places)
		if errors.Is(err, store.ErrTurnNotCommitted) {
			// The outcome is recorded; the turn runs again.
			h.unlock(ctx, item, "turn not committed", err)
			return false, nil, nil
		}
		return false, nil, err
	}
	t.handed = len(ws)
	tasks := h.leased(ws, at)
	if len(tasks) > 0 {
		first, tasks = tasks[0], tasks[1:]
	}
	h.tasks.give(places, tasks...)
	h.committed(ctx, item, t, began)
	h.trace.turnEnded(t.span, t)
	return true, first, nil
}

// createTurned creates n with its first turn in one commit
// (store.Handoff.CreateAndTurn). The turn runs here, on the caller's
// goroutine, in the place of the idle orchestration worker the caller
// reserved, and the tasks its commit leases go to the idle activity
// workers. When the host panics loading the module or running the turn,
// the instance commits failed, as a turn of its own would leave it. It
// reports false, having written nothing, when the turn cannot commit
// without a turn of its own (its module does not load here, the guest
// failed or refused the turn: a turn of its own, after a plain create,
// decides what becomes of the instance).
func (h *Host) createTurned(ctx context.Context, n store.NewInstance) (turned bool, err error) {
	var (
		item    *store.WorkItem
		t       *ran
		c       *store.TurnCommit
		failure *engine.Failure // the panic's, committed in place of the turn
		sp      trace.Span
		began   time.Time
		places  int // reserved for the tasks the commit leases
	)
	next := func(it *store.WorkItem) (*store.TurnCommit, int) {
		item = it
		if _, err := h.reg.module(context.WithoutCancel(ctx), n.ModuleHash); err != nil {
			var p *guard.Panic
			if !errors.As(err, &p) {
				return nil, 0
			}
			failure = p.Failure(panickedLoading)
		} else {
			began = time.Now()
			sp = h.trace.turn(ctx, it)
			if c, t = h.makeTurn(ctx, it, firstTurn); c == nil && t != nil {
				failure, t = t.panicked, nil
			}
		}
		if failure != nil {
			fc := h.failing(it, failure)
			return &fc, 0
		}
		if c == nil {
			return nil, 0
		}
		places = h.tasks.reserve(t.own())
		return c, places
	}
	turned, ws, err := h.handoffs.CreateAndTurn(ctx, n, h.opts.Lease, next)
	defer func() { h.trace.turnEnded(sp, t) }()
	switch {
	case err != nil || !turned:
		if t != nil {
			t.unkept.close(context.WithoutCancel(ctx))
			h.tasks.give(places)
			t = nil
		}
		return false, err
	case failure != nil:
		h.failed(ctx, item, failure)
		return true, nil
	}
	h.keep(context.WithoutCancel(ctx), n.ID, t.unkept, t.res, c.Now)
	t.handed = h.handTasks(places, ws, c.Now)
	h.committed(ctx, item, t, began)
	return true, nil
}

// wanted reports whether the execution that scheduled w still runs, so
// that another attempt's result would reach it; when the store cannot
// tell, it reports true. The attempt of a task whose execution has ended
// is the last.
func (h *Host) wanted(ctx context.Context, w *store.ActivityWork) bool {
	inst, err := h.st.GetInstance(ctx, w.InstanceID)
	return err != nil && !errors.Is(err, store.ErrNotFound) || err == nil && inst.ExecutionID == w.ExecutionID && !inst.Status.IsTerminal()
}

// nextAttempt reports whether the attempt of w that ended with o is
// followed by another, and after how long: when it failed, not finally,
// and its call's retry policy allows it.
func nextAttempt(w *store.ActivityWork, o outcome) (time.Duration, bool) {
	if o.final || o.result.Kind != engine.ActivityFailed {
		return 0, false
	}
	return w.Task.Retry.Next(w.Failures+1, o.result.Failure)
}

// record logs err, the error of recording the outcome of an attempt this
// host ran (finish), if any. An outcome not recorded is not lost: the
// task is delivered again when its lease ends.
func (h *Host) record(ctx context.Context, w *store.ActivityWork, err error) {
	switch {
	case err == nil:
	case cutShort(ctx, err):
		h.opts.Logger.Info("activity outcome not recorded: the host is stopping; the activity runs again at the next start", "instance", w.InstanceID, "activity", w.Task.Name)
	default:
		h.opts.Logger.Error("activity outcome not recorded", "instance", w.InstanceID, "activity", w.Task.Name, "err", err)
	}
}
