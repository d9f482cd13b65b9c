package host

import (
	"context"
	"errors"
	"sync"
	"time"
)

// attempts holds the activity attempts this host runs, so that it can stop
// those whose result nobody will take: when their instance ends (it
// completed, failed, was cancelled or terminated, or continued as new), or
// the orchestration cancelled the activity (ctx.Select cancels the futures
// that lost). A stopped attempt's wasm instance is closed at once, freeing
// its core; the task completes with a failure that says why, which the
// engine ignores, as it ignores any result of a cancelled activity.
type attempts struct {
	mu    sync.Mutex
	byKey map[attemptKey]context.CancelCauseFunc
	// unwanted holds the calls the orchestrations cancelled lately, for
	// the heartbeats of workers outside the host (HeartbeatTask), who
	// learn of it there; order holds them oldest first, with when.
	unwanted map[attemptKey]bool
	order    []unwantedCall
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

func newAttempts() *attempts {
	return &attempts{byKey: map[attemptKey]context.CancelCauseFunc{}, unwanted: map[attemptKey]bool{}}
}

// start registers an attempt and returns its context, which stop cancels,
// and the function that unregisters it.
func (r *attempts) start(ctx context.Context, k attemptKey) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.byKey[k] = cancel
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		delete(r.byKey, k)
		r.mu.Unlock()
		cancel(nil)
	}
}

// stop stops the attempt k, or, when k.schedule is 0, every attempt of
// k's execution, for the reason cause gives.
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
	for key, cancel := range r.byKey {
		if key == k || k.schedule == 0 && key.instance == k.instance && key.execution == k.execution {
			cancel(cause)
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
// stopped, and details for its failure (a stack), if any.
type stoppedError struct{ why, details string }

func (e *stoppedError) Error() string { return e.why }

// stopCause returns why ctx's attempt was stopped, or nil.
func stopCause(ctx context.Context) *stoppedError {
	var s *stoppedError
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}
