package durabox

import (
	"errors"
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/plainjson"
)

// ErrCanceled is the error of a future whose operation was cancelled: it lost
// a Select, its scope was cancelled (Context.WithCancel), or the instance's
// cancellation was requested (then the error is a *CanceledError, which is
// ErrCanceled too).
var ErrCanceled = errors.New("durabox: the operation was cancelled")

// CanceledError is the error of the futures an instance was waiting on when
// its cancellation was requested, and of Context.Err after it.
type CanceledError struct {
	Reason string
}

func (e *CanceledError) Error() string {
	if e.Reason == "" {
		return "durabox: the instance was cancelled"
	}
	return "durabox: the instance was cancelled: " + e.Reason
}

// Is makes a CanceledError match ErrCanceled.
func (e *CanceledError) Is(target error) bool { return target == ErrCanceled }

// Future is the eventual result of an activity call, a timer or a wait for
// an event. It resolves when the host delivers the completion recorded in
// history.
type Future struct {
	rt *runtime
	// seq and kind are those of the command that started the operation (0
	// for a future resolved at once, and for a branch's).
	seq  uint64
	kind abi.CommandKind
	// name is the activity's or the child orchestration's name.
	name string
	// scope is the cancellation scope the operation was started in (nil
	// for the instance's own).
	scope    *scope
	resolved bool
	result   []byte
	err      error
	// waiters are the units parked on the future; firstWaiter holds the
	// first, and alone the future itself for Get to wait on, so that the
	// usual wait (one unit on one future) allocates nothing.
	waiters     []*unit
	firstWaiter [1]*unit
	alone       [1]*Future
}

// Ready reports whether the future has resolved, without blocking.
func (f *Future) Ready() bool {
	f.rt.own("Future.Ready")
	return f.resolved
}

// Get blocks the orchestration until the future resolves, then decodes its
// result into out (which may be nil to ignore it) and returns its error.
func (f *Future) Get(out any) error {
	f.rt.own("Future.Get")
	for !f.resolved {
		f.alone[0] = f
		f.rt.sched.wait(f.alone[:])
	}
	if f.err != nil {
		return f.err
	}
	if out == nil || len(f.result) == 0 {
		return nil
	}
	if err := plainjson.Unmarshal(f.result, out); err != nil {
		return fmt.Errorf("durabox: result %s does not decode into %T: %w", f.result, out, err)
	}
	return nil
}

// Await blocks until f resolves and returns its result decoded as T.
func Await[T any](f *Future) (T, error) {
	var out T
	err := f.Get(&out)
	return out, err
}

// All waits for every future and returns their results decoded as T, in the
// order of futures (not the order they resolved in). It returns the first
// error in that order.
func All[T any](futures ...*Future) ([]T, error) {
	out := make([]T, len(futures))
	var first error
	for i, f := range futures {
		var err error
		out[i], err = Await[T](f)
		if err != nil && first == nil {
			first = err
		}
	}
	return out, first
}

func (f *Future) resolve(result []byte, failure *abi.Failure) {
	switch {
	case failure == nil:
		f.settle(result, nil)
	case f.kind == abi.CommandStartChild:
		f.settle(result, &ChildError{Orchestration: f.name, Message: failure.Message, Details: failure.Details})
	case f.kind == abi.CommandRaise:
		f.settle(nil, &RaiseError{Event: f.name, Message: failure.Message})
	default:
		f.settle(result, &ActivityError{Activity: f.name, Message: failure.Message, Details: failure.Details, Type: failure.Type})
	}
}

// resolveActivity resolves an activity's future with the outcome j
// brings, and the attempts it took.
func (f *Future) resolveActivity(j abi.Job) {
	f.resolve(j.Result, j.Failure)
	var failed *ActivityError
	if errors.As(f.err, &failed) {
		failed.Attempts = int(j.Attempts)
	}
}

// settle resolves the future and wakes the units parked on it.
func (f *Future) settle(result []byte, err error) {
	if f.resolved {
		return
	}
	f.resolved, f.result, f.err = true, result, err
	for s := f.scope; s != nil; s = s.parent {
		delete(s.open, f.seq)
	}
	// Waking a unit takes it off every future it waits on, this one too:
	// the list is taken first.
	waiters := f.waiters
	f.waiters = nil
	for _, u := range waiters {
		f.rt.sched.wakeUnit(u)
	}
}

// cancel cancels the future's operation with a command the host records, and
// resolves the future with ErrCanceled.
func (f *Future) cancel() { f.cancelWith(ErrCanceled) }

// cancelWith cancels the future's operation and resolves it with err. A
// future of no operation (a branch's, from Context.Go) is left as it is:
// there is nothing to cancel, and its branch goes on.
func (f *Future) cancelWith(err error) {
	if f.resolved || f.seq == 0 || f.kind == abi.CommandRaise {
		// A raise is delivered with the commit that records it: there is
		// nothing left to cancel, and its outcome comes.
		return
	}
	kind := abi.CommandCancelTimer
	switch f.kind {
	case abi.CommandScheduleActivity:
		kind = abi.CommandCancelActivity
	case abi.CommandWaitEvent, abi.CommandWaitEventPersistent:
		kind = abi.CommandCancelWait
	case abi.CommandStartChild:
		kind = abi.CommandCancelChild
	}
	f.rt.command(abi.Command{Kind: kind, Target: f.seq})
	delete(f.rt.futures, f.seq)
	f.settle(nil, err)
}

// ActivityError is the error an activity call returns when the activity
// failed.
type ActivityError struct {
	// Activity is the activity's name.
	Activity string
	// Message is the activity's error text.
	Message string
	// Details is extra diagnostic text, such as a panic's stack trace.
	Details string
	// Type is the error's type, as the activity named it (NewError);
	// empty when it named none, and for the host's own failures (a
	// deadline, a crash).
	Type string
	// Attempts is how many attempts the call made, the last included,
	// when it had a retry policy (WithRetry, DefaultRetryPolicy); zero when
	// it had none.
	Attempts int
}

func (e *ActivityError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("activity %q failed: %s (after %d attempts)", e.Activity, e.Message, e.Attempts)
	}
	return fmt.Sprintf("activity %q failed: %s", e.Activity, e.Message)
}

// ChildError is the error a child orchestration's future returns when the
// child failed.
type ChildError struct {
	// Orchestration is the child's orchestration name.
	Orchestration string
	Message       string
	Details       string
}

func (e *ChildError) Error() string {
	return fmt.Sprintf("child orchestration %q failed: %s", e.Orchestration, e.Message)
}
