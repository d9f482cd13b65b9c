package durabox

import (
	"encoding/json"
	"fmt"

	"github.com/durabox/durabox/abi"
)

// Future is the eventual result of an activity call or a timer. It resolves
// when the host delivers the completion recorded in history.
type Future struct {
	rt *runtime
	// activity is the activity's name, for futures of activity calls.
	activity string
	resolved bool
	result   []byte
	err      error
	// waiters are the units blocked in Get.
	waiters []*unit
}

// Ready reports whether the future has resolved, without blocking.
func (f *Future) Ready() bool { return f.resolved }

// Get blocks the orchestration until the future resolves, then decodes its
// result into out (which may be nil to ignore it) and returns its error.
func (f *Future) Get(out any) error {
	for !f.resolved {
		f.waiters = append(f.waiters, f.rt.sched.current)
		f.rt.sched.park()
	}
	if f.err != nil {
		return f.err
	}
	if out == nil || len(f.result) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.result, out); err != nil {
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

func (f *Future) resolve(result []byte, failure *abi.Failure) {
	if f.resolved {
		return
	}
	f.resolved, f.result = true, result
	if failure != nil {
		f.err = &ActivityError{Activity: f.activity, Message: failure.Message, Details: failure.Details}
	}
	for _, u := range f.waiters {
		f.rt.sched.ready(u)
	}
	f.waiters = nil
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
}

func (e *ActivityError) Error() string {
	return fmt.Sprintf("activity %q failed: %s", e.Activity, e.Message)
}
