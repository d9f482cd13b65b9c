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
	ctx := WithActivity(context.Background(), info, req.Heartbeat, hostHeartbeat)
	a, _ := attemptOf(ctx)
	defer a.cancel()
	out, err := fn(ctx, req.Input)
	if err != nil {
		return &abi.ActivityResult{Failure: &abi.Failure{Message: err.Error(), Type: ErrorType(err)}}
	}
	return &abi.ActivityResult{Output: out}
}

// manifest describes what the module registers.
func manifest() *abi.Manifest {
	return &abi.Manifest{SDK: sdkName, Orchestrations: sortedNames(orchestrations), Activities: sortedNames(activities), Updates: true}
}
