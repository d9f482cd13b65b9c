package host

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// attempts holds the activity attempts this host runs, so that it can stop
// those whose result nobody will take: when their instance ends (it
// completed, failed, was cancelled or terminated, or continued as new), or
// the orchestration cancelled the activity (ctx.Select cancels the futures
// that lost). An attempt that has sent a heartbeat is told first: its next
// heartbeat answers that its result is no longer wanted (the SDK cancels
// its context), and it is stopped after the grace period
// (Options.CancelGrace) unless it returns before. Any other is stopped at
// once: its wasm instance is closed, freeing its core. The task completes
// with a failure that says why, which the engine ignores, as it ignores
// any result of a cancelled activity.
type attempts struct {
	grace time.Duration
	mu    sync.Mutex
	byKey map[attemptKey]*runningAttempt
	// unwanted holds the calls the orchestrations cancelled lately, for
	// the heartbeats of workers outside the host (HeartbeatTask), who
	// learn of it there; order holds them oldest first, with when.
	unwanted map[attemptKey]bool
	order    []unwantedCall
}

// runningAttempt is an attempt running.
type runningAttempt struct {
	cancel context.CancelCauseFunc
	// beaten is set once the attempt sent a heartbeat: it can be told
	// that its result is no longer wanted, and unwanted is set then.
	beaten, unwanted atomic.Bool
}

// unwantedCall is a call cancelled at a time.
type unwantedCall struct {
	key attemptKey
	at  time.Time
}

// attempts remembers a cancelled call for unwantedFor (longer than a
// worker goes between heartbeats), and no more than maxUnwanted of them.
const (
	unwantedFor = time.Hour
	maxUnwanted = 100_000
)

// attemptKey names an activity task: its instance's execution and the
// event that scheduled it.
type attemptKey struct {
	instance  string
	execution int64
	schedule  int64
}

func newAttempts(grace time.Duration) *attempts {
	return &attempts{grace: grace, byKey: map[attemptKey]*runningAttempt{}, unwanted: map[attemptKey]bool{}}
}

// start registers an attempt and returns its context, which stop cancels,
// its state, and the function that unregisters it.
func (r *attempts) start(ctx context.Context, k attemptKey) (context.Context, *runningAttempt, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	run := &runningAttempt{cancel: cancel}
	r.mu.Lock()
	r.byKey[k] = run
	r.mu.Unlock()
	return ctx, run, func() {
		r.mu.Lock()
		if r.byKey[k] == run { // not the next attempt's, started since
			delete(r.byKey, k)
		}
		r.mu.Unlock()
		cancel(nil)
	}
}

// stop stops the attempt k, or, when k.schedule is 0, every attempt of
// k's execution, for the reason cause gives: after the grace period, an
// attempt that sends heartbeats; any other at once.
func (r *attempts) stop(k attemptKey, cause *stoppedError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k.schedule != 0 {
		now := time.Now()
		for len(r.order) > 0 && (now.Sub(r.order[0].at) > unwantedFor || len(r.order) >= maxUnwanted) {
			delete(r.unwanted, r.order[0].key)
			r.order = r.order[1:]
		}
		r.unwanted[k] = true
		r.order = append(r.order, unwantedCall{k, now})
	}
	for key, run := range r.byKey {
		if key == k || k.schedule == 0 && key.instance == k.instance && key.execution == k.execution {
			if run.beaten.Load() && r.grace > 0 && !cause.redeliver {
				run.unwanted.Store(true)
				time.AfterFunc(r.grace, func() { run.cancel(cause) })
			} else {
				run.cancel(cause)
			}
		}
	}
}

// cancelled reports whether stop stopped the call k (not its whole
// execution) within the last unwantedFor.
func (r *attempts) cancelled(k attemptKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unwanted[k]
}

// stoppedError is the cause of a stopped attempt's context: why it was
// stopped, and details for its failure (a stack), if any. With
// redeliver, the attempt records nothing: its task goes to the next
// attempt when its lease ends.
type stoppedError struct {
	why, details string
	redeliver    bool
}

func (e *stoppedError) Error() string { return e.why }

// stopCause returns why ctx's attempt was stopped, or nil.
func stopCause(ctx context.Context) *stoppedError {
	var s *stoppedError
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}
