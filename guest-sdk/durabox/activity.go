package durabox

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/plainjson"
)

// ActivityInfo describes the activity attempt running; read it with
// ActivityInfoFrom in activity code.
type ActivityInfo struct {
	// Name is the activity's name.
	Name string
	// InstanceID is the orchestration instance that called it.
	InstanceID string
	// Attempt counts the attempts of this call, from 1: each retry its
	// policy made (WithRetry) and each delivery again after a crash adds
	// one. An attempt above 1 means an earlier one may have run, in part
	// or whole: activities run at least once, so make them idempotent.
	Attempt int
}

// activityAttempt is what an activity attempt's context carries.
type activityAttempt struct {
	info ActivityInfo
	// last is the details of the last heartbeat an earlier attempt sent
	// (JSON), if any; beat sends a heartbeat.
	last   []byte
	beat   func(details []byte) error
	cancel context.CancelFunc
	// token completes the attempt from outside (CompleteLater), which sets
	// later once it has handed it out.
	token string
	later bool
}

// ErrActivityCanceled is what Heartbeat returns once the activity's result
// is no longer wanted: the orchestration cancelled the call (a Select it
// lost, a scope cancelled), or its instance ended. The attempt's context
// is done by then; the activity should clean up and return. The host stops
// it after a grace period (durabox serve --cancel-grace).
var ErrActivityCanceled = errors.New("durabox: the activity's result is no longer wanted (the orchestration cancelled the call, or its instance ended)")

type activityAttemptKey struct{}

func attemptOf(ctx context.Context) (*activityAttempt, bool) {
	a, ok := ctx.Value(activityAttemptKey{}).(*activityAttempt)
	return a, ok
}

// ActivityInfoFrom returns the information about the running activity
// attempt that ctx carries, if any.
func ActivityInfoFrom(ctx context.Context) (ActivityInfo, bool) {
	a, ok := attemptOf(ctx)
	if !ok {
		return ActivityInfo{}, false
	}
	return a.info, true
}

// WithActivity returns a context for one attempt of an activity run
// outside the host: by package worker of the durabox module (which calls
// it; an activity does not), or by a test of the activity. It carries info
// (ActivityInfoFrom), the details of the last heartbeat an earlier attempt
// sent, as JSON (LastHeartbeat), and heartbeat, which Heartbeat calls with
// each heartbeat's details, as JSON (nil when it has none).
// When heartbeat returns ErrActivityCanceled, the context is cancelled.
func WithActivity(parent context.Context, info ActivityInfo, lastHeartbeat []byte, heartbeat func(details []byte) error) context.Context {
	ctx, cancel := context.WithCancel(parent)
	return context.WithValue(ctx, activityAttemptKey{}, &activityAttempt{info: info, last: lastHeartbeat, beat: heartbeat, cancel: cancel})
}

// WithCompletionToken gives the activity attempt ctx carries (WithActivity)
// the token that completes it from outside, for CompleteLater: package
// worker calls it with the token the host gave the task.
func WithCompletionToken(ctx context.Context, token string) context.Context {
	if a, ok := attemptOf(ctx); ok {
		a.token = token
	}
	return ctx
}

// ErrResultPending is what an activity returns, after CompleteLater, to
// leave its outcome to whoever holds the completion token.
var ErrResultPending = errors.New("durabox: the activity's result comes later, from outside")

// CompleteLater returns the token that completes the activity attempt ctx
// runs from outside: hand it to the system that will decide (a person's
// approval, a payment provider's webhook), then return ErrResultPending.
// Whoever holds the token completes the call, or fails it, before the
// attempt's deadline (the call's WithTimeout, or the host's
// --activity-timeout): `durabox complete TOKEN --result JSON`, or POST
// /v1/tasks/{token}/complete or fail. Once the deadline passes, the token
// is refused, and the attempt has failed as timed out (its call's retry
// policy may try again, with a new token). It returns an error outside an
// activity, or on a host too old to complete activities from outside.
func CompleteLater(ctx context.Context) (string, error) {
	a, ok := attemptOf(ctx)
	switch {
	case !ok:
		return "", errors.New("durabox: CompleteLater outside an activity: pass the context the activity was given")
	case a.token == "":
		return "", errors.New("durabox: CompleteLater: this attempt has no completion token (the host that runs it is too old to complete activities from outside)")
	}
	a.later = true
	return a.token, nil
}

// ResultPending reports whether err, what the activity attempt ctx carries
// returned, leaves its outcome to its completion token: it is
// ErrResultPending, after CompleteLater. When it is ErrResultPending
// without CompleteLater, the error says so. For runners of activities
// (package worker); an activity does not call it.
func ResultPending(ctx context.Context, err error) (bool, error) {
	if !errors.Is(err, ErrResultPending) {
		return false, nil
	}
	if a, ok := attemptOf(ctx); ok && a.later {
		return true, nil
	}
	return false, errors.New("durabox: the activity returned ErrResultPending without calling CompleteLater: nobody holds a token to complete it")
}

// Heartbeat tells the host that the activity attempt ctx runs is alive,
// and records details (encoded to JSON; nil for none) for the next attempt
// of the same call, should this one not finish: a crash, a lost worker, or
// a heartbeat timeout (WithHeartbeatTimeout). Send one at least every
// heartbeat timeout, when the call sets one; a long activity without one
// may send them to keep its details. It returns ErrActivityCanceled, and
// ctx is done, once the result is no longer wanted; another error when the
// host did not take it (the activity may go on, or stop). Outside an
// activity attempt, it returns an error and does nothing.
func Heartbeat(ctx context.Context, details any) error {
	a, ok := attemptOf(ctx)
	if !ok {
		return errors.New("durabox: Heartbeat outside an activity: pass the context the activity was given")
	}
	var raw []byte
	if details != nil {
		var err error
		if raw, err = plainjson.Marshal(details); err != nil {
			return fmt.Errorf("durabox: the heartbeat's details do not encode to JSON: %w", err)
		}
	}
	err := a.beat(raw)
	if errors.Is(err, ErrActivityCanceled) {
		a.cancel()
	}
	return err
}

// LastHeartbeat decodes into v the details of the last heartbeat an
// earlier attempt of this call sent (Heartbeat), so that this one can
// resume where it stopped. It reports false when there is none: this is
// the first attempt, or no attempt before it sent details.
func LastHeartbeat(ctx context.Context, v any) (bool, error) {
	a, ok := attemptOf(ctx)
	if !ok || len(a.last) == 0 {
		return false, nil
	}
	if err := plainjson.Unmarshal(a.last, v); err != nil {
		return true, fmt.Errorf("durabox: the last heartbeat's details do not decode: %w", err)
	}
	return true, nil
}

// runActivity runs one attempt of the activity the module registers under
// req.Name and reports its outcome.
func runActivity(req *abi.ActivityRequest) *abi.ActivityResult {
	fn, ok := activities[req.Name]
	if !ok {
		return &abi.ActivityResult{Failure: &abi.Failure{
			Message: fmt.Sprintf("this module registers no activity %q (it registers %v)", req.Name, sortedNames(activities)),
		}}
	}
	return callActivity(req, fn)
}

// callActivity runs fn as one attempt of the activity req describes. A
// panic in the activity fails the attempt with the panic's message and
// stack.
func callActivity(req *abi.ActivityRequest, fn activityFunc) (res *abi.ActivityResult) {
	defer func() {
		if r := recover(); r != nil {
			res = &abi.ActivityResult{Failure: &abi.Failure{Message: fmt.Sprintf("panic: %v", r), Details: string(debug.Stack())}}
		}
	}()
	info := ActivityInfo{Name: req.Name, InstanceID: req.InstanceID, Attempt: int(req.Attempt)}
	ctx := WithCompletionToken(WithActivity(context.Background(), info, req.Heartbeat, hostHeartbeat), req.CompletionToken)
	a, _ := attemptOf(ctx)
	defer a.cancel()
	out, err := fn(ctx, req.Input)
	if pending, perr := ResultPending(ctx, err); pending {
		return &abi.ActivityResult{Pending: true}
	} else if perr != nil {
		err = perr
	}
	if err != nil {
		return &abi.ActivityResult{Failure: &abi.Failure{Message: err.Error(), Type: ErrorType(err)}}
	}
	return &abi.ActivityResult{Output: out}
}

// manifest describes what the module registers.
func manifest() *abi.Manifest {
	return &abi.Manifest{SDK: sdkName, Orchestrations: sortedNames(orchestrations), Activities: sortedNames(activities), Updates: true}
}
