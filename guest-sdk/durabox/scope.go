package durabox

import (
	"maps"
	"slices"

	"github.com/durabox/durabox/abi"
)

// scope is a cancellation scope: the operations started through one
// Context made by WithCancel, and through the Contexts made from it, which
// its cancel func cancels together.
type scope struct {
	parent    *scope
	cancelled bool
	// open holds the operations of the scope and of the scopes within it
	// that have not resolved, by command sequence number.
	open map[uint64]*Future
}

// err returns ErrCanceled once s or a scope it is within was cancelled
// (nil for the instance's own scope, nil).
func (s *scope) err() error {
	for ; s != nil; s = s.parent {
		if s.cancelled {
			return ErrCanceled
		}
	}
	return nil
}

// within reports whether s is outer or a scope within it.
func (s *scope) within(outer *scope) bool {
	for ; s != nil; s = s.parent {
		if s == outer {
			return true
		}
	}
	return false
}

// WithCancel returns a Context within c, and the func that cancels it: the
// activities, timers, waits and children started through it (and through
// the Contexts made from it, by WithCancel or handed to branches by Go)
// that are still open are cancelled together, in the order they were
// started, each by the same command a lost Select records, and their
// futures resolve with ErrCanceled; Awaits on it return ErrCanceled. An
// operation started through a cancelled Context is not started at all: its
// future resolves at once with ErrCanceled, and nothing is recorded
// (StartDetached returns ErrCanceled; Sleep, Await and AwaitWithTimeout
// return it). Cancelling c cancels the new Context too; cancelling twice,
// or after everything resolved, does nothing. Branches are not stopped:
// a branch whose Context is cancelled goes on, and the operations it then
// starts resolve at once. The cancel func may be called only where the
// Context may be used.
//
//	scope, cancel := ctx.WithCancel()
//	charge := scope.CallActivity("Charge", order)
//	reminder := scope.NewTimer(24 * time.Hour)
//	...
//	cancel() // the charge's result, if it comes, is ignored; the timer will not fire
func (c *Context) WithCancel() (*Context, func()) {
	c.rt.own("ctx.WithCancel")
	s := &scope{parent: c.scope, open: map[uint64]*Future{}}
	return &Context{rt: c.rt, scope: s}, func() {
		c.rt.own("the cancel func of ctx.WithCancel")
		c.rt.cancelScope(s)
	}
}

// op starts the operation cmd in c's scope, or, when the scope is
// cancelled, returns a future resolved with ErrCanceled and emits nothing.
func (c *Context) op(cmd abi.Command) *Future {
	if err := c.scope.err(); err != nil {
		return c.rt.settled(err)
	}
	f := c.rt.command(cmd)
	if f.resolved {
		return f
	}
	f.scope = c.scope
	for s := c.scope; s != nil; s = s.parent {
		s.open[f.seq] = f
	}
	return f
}

// cancelScope cancels the operations open in s, in command order, and the
// Awaits parked in it.
func (rt *runtime) cancelScope(s *scope) {
	if s.cancelled {
		return
	}
	s.cancelled = true
	for _, seq := range slices.Sorted(maps.Keys(s.open)) {
		s.open[seq].cancel()
	}
	rt.sched.endAwaits(func(w *Future) bool { return w.scope.within(s) }, ErrCanceled)
}
