package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/host/internal/size"
	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/store"
)

// leasedTask is an activity task this host leased, and when its lease
// ends.
type leasedTask struct {
	w     *store.ActivityWork
	until time.Time
}

// dispatchActivities runs activity tasks until ctx is done.
func (h *Host) dispatchActivities(ctx context.Context) {
	dispatch(ctx, h, "activity", h.activityWork, h.tasks, h.opts.ActivityWorkers,
		func(max int) ([]*leasedTask, error) {
			if err := h.writableAgain(ctx); err != nil {
				return nil, err
			}
			now := h.opts.Clock()
			ws, err := h.st.LockNextActivities(ctx, now, h.opts.Lease, max, h.reg.skipped())
			return h.leased(ws, now), err
		},
		func(t *leasedTask) { h.complete(ctx, t.w, t.until) })
}

// leased is ws, leased at now, with the end of each one's lease.
func (h *Host) leased(ws []*store.ActivityWork, now time.Time) []*leasedTask {
	tasks := make([]*leasedTask, len(ws))
	for i, w := range ws {
		tasks[i] = &leasedTask{w: w, until: now.Add(store.LeaseFor(w, h.opts.Lease))}
	}
	return tasks
}

// handTasks hands the activity workers ws, leased at now by a commit for
// which places were reserved (handoff.go), and returns how many it
// handed.
func (h *Host) handTasks(places int, ws []*store.ActivityWork, now time.Time) int {
	h.tasks.give(places, h.leased(ws, now)...)
	return len(ws)
}

// complete runs an activity task leased until until (zero: a lease of no
// end, as when RunActivities steps by hand) and records its outcome. A
// task whose module this host cannot run it leaves leased, untouched: the
// fetches pass over it from now on (refused.go), and its lease ends as if
// its worker had stopped. Nor does it start an attempt whose lease ended
// before it could (the host was held up, by a database that was down, for
// one): the task is another worker's by then, and an attempt started now
// would run beside that worker's, or after it. When the outcome commits
// with its instance's next turn (handoffTurn), it runs next the first
// task that turn leased to this host.
func (h *Host) complete(ctx context.Context, w *store.ActivityWork, until time.Time) {
	for t := (&leasedTask{w: w, until: until}); t != nil; {
		t = h.runTask(ctx, t.w, t.until, true)
	}
}

// runTask is complete for one task; it returns the task to run next, if
// any. Without chain, the outcome commits alone and the turn it gives is
// left to a turn of its own (RunActivities: its caller decides when).
func (h *Host) runTask(ctx context.Context, w *store.ActivityWork, until time.Time, chain bool) *leasedTask {
	if _, err := h.reg.module(ctx, w.ModuleHash); errors.Is(err, api.ErrCannotRun) {
		return nil
	}
	if late := h.opts.Clock().Sub(until); !until.IsZero() && late >= 0 {
		h.opts.Logger.Warn("activity attempt not started: its lease ended before the host could start it, and the task goes to the next worker to ask",
			"instance", w.InstanceID, "activity", w.Task.Name, "scheduleId", w.Task.ScheduleID, "delivery", w.Attempt, "late", late)
		return nil
	}
	if w.Unanswered {
		// The attempt before waited to be completed from outside, and was
		// not: it failed as timed out, and its call's policy decides.
		h.record(ctx, w, h.finish(ctx, w, outcome{result: unanswered(w)}))
		return nil
	}
	ctx, sp := h.trace.activity(ctx, w)
	o := h.attempt(ctx, w, until)
	h.trace.activityEnded(sp, o.result)
	if ctx.Err() != nil || o.result.Kind == "" {
		// Shutting down, or stopped for its silence: the attempt was cut
		// short, so record nothing; the task is delivered again after the
		// restart, or when its lease ends.
		return nil
	}
	next, err := h.finishOwn(ctx, w, o, chain)
	h.record(ctx, w, err)
	return next
}

// outcome is how an attempt of an activity task ended.
type outcome struct {
	// result reports it: an ActivityCompleted or an ActivityFailed naming
	// the task's ScheduleID.
	result engine.Event
	// ran is how long the attempt ran; zero when unknown.
	ran time.Duration
	// final marks a failure that no retry may follow, whatever the call's
	// policy: the attempt was stopped because nobody wants its result, or
	// the task was given up as poison.
	final bool
}

// attempt runs an attempt of an activity task, or gives up on the task as
// poison, and returns its outcome. A panic fails the attempt, with the
// panic and its stack.
func (h *Host) attempt(ctx context.Context, w *store.ActivityWork, until time.Time) (o outcome) {
	defer h.guard.Catch(guard.Activity, func(p *guard.Panic) {
		o = outcome{result: engine.Event{Kind: engine.ActivityFailed, ScheduleID: w.Task.ScheduleID,
			Failure: p.Failure(fmt.Sprintf("activity %q: the host panicked running its attempt", w.Task.Name))}}
	}, "instance", w.InstanceID, "activity", w.Task.Name)
	if failure, ok := h.poisoned(w); ok {
		return outcome{result: failure, final: true}
	}
	if w.Attempt > 1 {
		h.opts.Logger.Info("activity delivered again: an earlier delivery did not finish (a crash, or a lease that expired)",
			"instance", w.InstanceID, "activity", w.Task.Name, "scheduleId", w.Task.ScheduleID, "delivery", w.Attempt)
	}
	began, started := time.Now(), h.opts.Clock()
	key := attemptKey{w.InstanceID, w.ExecutionID, w.Task.ScheduleID}
	attemptCtx, run, done := h.attempts.start(ctx, key)
	defer done()
	b := &beats{h: h, w: w, run: run}
	if w.Task.HeartbeatTimeout > 0 {
		// Only heartbeats keep the lease of a call that asks for them; one
		// silent for its heartbeat timeout is stopped (b.arm, once the
		// activity's code runs).
		defer b.disarm()
	} else {
		stopExtending := h.extendLease(attemptCtx, w, until, run)
		defer stopExtending()
	}
	result := h.runActivity(attemptCtx, w, b)
	stopped := stopCause(attemptCtx)
	switch {
	case stopped != nil && stopped.redeliver:
		return outcome{}
	case stopped == nil && b.secret != "" && b.pending:
		// Its outcome comes from outside, by the token it was given,
		// before its deadline.
		until := started.Add(h.attemptTimeout(w))
		h.record(ctx, w, h.st.AwaitCompletion(ctx, w, b.secret, until))
		h.opts.Logger.Info("activity waits to be completed from outside", "instance", w.InstanceID, "activity", w.Task.Name, "until", until)
		return outcome{}
	}
	return outcome{result: result, ran: time.Since(began), final: stopped != nil}
}

// attemptTimeout is the deadline of an attempt of w: its call's, else the
// host's.
func (h *Host) attemptTimeout(w *store.ActivityWork) time.Duration {
	if w.Task.Timeout > 0 {
		return w.Task.Timeout
	}
	return h.opts.ActivityTimeout
}

// unanswered is the failure of an attempt of w that waited to be
// completed from outside, and was not by its deadline.
func unanswered(w *store.ActivityWork) engine.Event {
	return engine.Event{Kind: engine.ActivityFailed, ScheduleID: w.Task.ScheduleID, Failure: &engine.Failure{
		Message: fmt.Sprintf("activity %q timed out: it was to be completed from outside (durabox.CompleteLater), and nobody did by its deadline", w.Task.Name),
		Type:    "Timeout"}}
}

// beats takes the heartbeats of an attempt the host runs (the heartbeat
// import).
type beats struct {
	h   *Host
	w   *store.ActivityWork
	run *runningAttempt
	// silence stops the attempt when its call's heartbeat timeout passes
	// without one; mu guards it.
	mu      sync.Mutex
	silence *time.Timer
	// secret is the attempt's completion token's, and pending is set when
	// the attempt answered that its outcome comes from outside.
	secret  string
	pending bool
}

// arm starts the watch on the heartbeats of an attempt whose call asks
// for them, as its code begins: the lease is renewed for the heartbeat
// timeout, so that the time the host took to start the attempt's wasm
// instance is not counted against it.
func (b *beats) arm(ctx context.Context) {
	if b.w.Task.HeartbeatTimeout <= 0 {
		return
	}
	b.beat(ctx, nil)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.silence = time.AfterFunc(b.w.Task.HeartbeatTimeout, b.silent)
}

// disarm stops the watch arm started, if any.
func (b *beats) disarm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.silence != nil {
		b.silence.Stop()
	}
}

// beat renews the attempt's lease and keeps details for the next
// attempt, and answers as the heartbeat import does.
func (b *beats) beat(ctx context.Context, details []byte) uint32 {
	if err := b.h.st.Heartbeat(ctx, b.w, details, b.h.opts.Clock(), store.LeaseFor(b.w, b.h.opts.Lease)); err != nil {
		b.h.opts.Logger.Warn("activity heartbeat not taken", "instance", b.w.InstanceID, "activity", b.w.Task.Name, "err", err)
		return wasi.HeartbeatRefused
	}
	b.mu.Lock()
	if b.silence != nil {
		b.silence.Reset(b.w.Task.HeartbeatTimeout)
	}
	b.mu.Unlock()
	b.run.beaten.Store(true)
	if b.run.unwanted.Load() {
		return wasi.HeartbeatUnwanted
	}
	return wasi.HeartbeatTaken
}

// silent stops an attempt that sent no heartbeat for its call's heartbeat
// timeout, recording nothing: its lease ends with the timeout, and the
// task goes to the next attempt.
func (b *beats) silent() {
	b.h.opts.Logger.Warn("activity attempt sent no heartbeat in time; it is stopped and its task delivered again",
		"instance", b.w.InstanceID, "activity", b.w.Task.Name, "attempt", b.w.Attempt, "heartbeatTimeout", b.w.Task.HeartbeatTimeout)
	// Its own attempt: by then the task's next attempt may run, under
	// the same key.
	b.run.cancel(&stoppedError{why: fmt.Sprintf("it sent no heartbeat for %s, its heartbeat timeout", b.w.Task.HeartbeatTimeout), redeliver: true})
}

// poisoned returns the failure of a task delivered more times than
// Options.PoisonAfter allows, and true; false for any other.
func (h *Host) poisoned(w *store.ActivityWork) (engine.Event, bool) {
	if w.Attempt <= h.opts.PoisonAfter {
		return engine.Event{}, false
	}
	h.opts.Logger.Error("activity failed as poison", "instance", w.InstanceID, "activity", w.Task.Name, "deliveries", w.Attempt-1)
	return engine.Event{Kind: engine.ActivityFailed, ScheduleID: w.Task.ScheduleID, Failure: &engine.Failure{
		Message: fmt.Sprintf("durabox gave up on activity %s: it was started %d times and never finished; "+
			"each time the host or worker running it crashed, was killed or the attempt outlived its lease (their logs tell what it was doing)", w.Task.Name, w.Attempt-1)}}, true
}

// extendLease extends w's lease every third of a lease while its attempt
// runs, so that an attempt longer than a lease (its call's deadline may be
// hours) is not handed to another worker meanwhile. It returns the function
// that stops it, which returns once no extension is under way. A timer
// runs each extension: an attempt shorter than a third of a lease, most of
// them, starts no goroutine and wakes no thread for it. A panic in an
// extension stops the attempt, which fails with the panic; a lease found
// lost (another worker has the task) stops run, which records nothing.
//
// The lease held until until (zero: a lease of no end, as when
// RunActivities steps by hand). An extension may take no longer than what
// is left of it, and when one fails and the next would come after the
// lease ends (the database does not answer: it is down, or this host is
// cut off from it), the host stops the attempt then, before the lease
// ends, rather than run it on beside the attempt of the worker that takes
// the task next.
func (h *Host) extendLease(ctx context.Context, w *store.ActivityWork, until time.Time, run *runningAttempt) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	every := h.opts.Lease / 3
	var (
		mu      sync.Mutex
		stopped bool
		timer   *time.Timer
	)
	extend := func() {
		defer h.guard.Catch(guard.Lease, func(p *guard.Panic) {
			h.attempts.stop(attemptKey{w.InstanceID, w.ExecutionID, w.Task.ScheduleID}, &stoppedError{
				why: "the host panicked extending its lease (a bug in durabox, which went on serving everything else; the details hold the stack): " + p.Error(), details: p.Stack})
		}, "instance", w.InstanceID, "activity", w.Task.Name)
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		guard.MayPanic(guard.PointLease, w.InstanceID)
		now := h.opts.Clock()
		err := h.extendBy(ctx, w, now, until)
		switch {
		case err == nil:
			if !until.IsZero() {
				until = later(until, now.Add(h.opts.Lease))
			}
		case ctx.Err() != nil:
		case errors.Is(err, store.ErrLeaseLost):
			// Another worker has the task: this attempt stops, and records
			// nothing.
			run.cancel(&stoppedError{why: "its lease was lost (it ended before this host could extend it), and its task went to another worker", redeliver: true})
			return
		case !until.IsZero() && !h.opts.Clock().Add(every).Before(until):
			h.opts.Logger.Warn("activity attempt stopped: its lease could not be extended and would end before the next try; the task goes to the next worker to ask",
				"instance", w.InstanceID, "activity", w.Task.Name, "until", until, "err", err)
			run.cancel(&stoppedError{why: fmt.Sprintf("its lease could not be extended (%v), and it would have ended before the next try", err), redeliver: true})
			return
		default:
			h.opts.Logger.Warn("activity lease not extended; once it ends, the task may be delivered again", "instance", w.InstanceID, "activity", w.Task.Name, "err", err)
		}
		timer.Reset(every)
	}
	mu.Lock()
	timer = time.AfterFunc(every, extend)
	mu.Unlock()
	return func() {
		cancel() // an extension under way gives up
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}

// extendBy extends w's lease at now, taking no longer than what is left
// of the lease, which holds until until (zero: no end).
func (h *Host) extendBy(ctx context.Context, w *store.ActivityWork, now, until time.Time) error {
	if !until.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, until.Sub(now))
		defer cancel()
	}
	return h.st.ExtendLease(ctx, w, now, h.opts.Lease)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// runActivity runs one attempt of an activity task and returns the message
// that reports its outcome.
func (h *Host) runActivity(ctx context.Context, w *store.ActivityWork, b *beats) engine.Event {
	ev := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID}
	out, failure := h.callActivity(ctx, w, b)
	if failure != nil {
		ev.Kind, ev.Failure = engine.ActivityFailed, failure
	} else {
		ev.Result = out
	}
	return ev
}

func (h *Host) callActivity(ctx context.Context, w *store.ActivityWork, b *beats) (_ []byte, failure *engine.Failure) {
	g, err := h.pool.get(ctx, w.ModuleHash, "instance", w.InstanceID, "execution", w.ExecutionID, "activity", w.Task.Name, "scheduleId", w.Task.ScheduleID, "attempt", w.Attempt)
	if err != nil {
		return nil, &engine.Failure{Message: fmt.Sprintf("activity %q could not start: %v", w.Task.Name, err)}
	}
	// The instance goes back to the pool once it has answered as it
	// should; otherwise (it crashed, was stopped, or the host panicked
	// using it) it is closed.
	healthy := false
	defer func() {
		if healthy {
			h.pool.put(ctx, w.ModuleHash, g)
		} else {
			g.close(ctx)
		}
	}()
	scratch := h.scratch(g, w)
	defer func() {
		scratch.explain(failure)
		scratch.end()
	}()
	// The attempt's deadline is the one its call set, shorter or longer
	// than the host's, else the host's (a pooled instance may have run an
	// attempt with another).
	g.cfg.timeout, g.cfg.callTimeout = h.opts.ActivityTimeout, w.Task.Timeout > 0
	if g.cfg.callTimeout {
		g.cfg.timeout = w.Task.Timeout
	}
	b.secret = newSecret()
	req := abi.EncodeActivityRequest(&abi.ActivityRequest{Name: w.Task.Name, Input: w.Task.Input, InstanceID: w.InstanceID,
		Attempt: uint32(w.Failures + w.Attempt), Heartbeat: w.Heartbeat, CompletionToken: completionToken(w.ID, b.secret)})
	guard.MayPanic(guard.PointActivity, w.InstanceID)
	g.cfg.env.SetHeartbeat(b.beat)
	b.arm(ctx)
	raw, err := g.exchange(ctx, abi.ExportActivity, req)
	g.cfg.env.SetHeartbeat(nil)
	g.cfg.log.endStep()
	if s := stopCause(ctx); s != nil {
		h.opts.Logger.Info("activity stopped", "instance", w.InstanceID, "activity", w.Task.Name, "scheduleId", w.Task.ScheduleID, "why", s.why)
		return nil, &engine.Failure{Message: fmt.Sprintf("activity %q was stopped: %s", w.Task.Name, s.why), Details: s.details}
	}
	if err != nil {
		how := "crashed"
		if errors.As(err, new(*timedOut)) {
			how = "timed out"
		}
		return nil, &engine.Failure{Message: fmt.Sprintf("activity %q %s: %v", w.Task.Name, how, err)}
	}
	res, err := abi.DecodeActivityResult(raw)
	if err != nil {
		return nil, &engine.Failure{Message: fmt.Sprintf("activity %q returned a result that does not decode: %v", w.Task.Name, err)}
	}
	healthy = true
	if res.Pending {
		b.pending = true
		return nil, nil
	}
	if res.Failure != nil {
		return nil, activityFailure(w.Task.Name, res.Failure)
	}
	if len(res.Output) > h.opts.MaxPayload {
		return nil, &engine.Failure{Message: fmt.Sprintf("activity %q returned a result of %s, over %s", w.Task.Name, size.MiB(len(res.Output)), size.PayloadLimit(h.opts.MaxPayload))}
	}
	if len(res.Output) > 0 {
		if err := ijson.Check("its output", res.Output); err != nil {
			return nil, &engine.Failure{Message: fmt.Sprintf("activity %q: %v", w.Task.Name, err)}
		}
	}
	return res.Output, nil
}

// activityFailure is the failure an attempt of activity name reports: f,
// unless its texts are not UTF-8 (the orchestration would see them live
// as they are, and on replay as history holds them, which is not the
// same), and then a failure that says so.
func activityFailure(name string, f *abi.Failure) *engine.Failure {
	if err := abi.CheckFailure(f); err != nil {
		return &engine.Failure{Message: fmt.Sprintf("activity %q: %v", name, err)}
	}
	return &engine.Failure{Message: f.Message, Details: f.Details, Type: f.Type}
}
