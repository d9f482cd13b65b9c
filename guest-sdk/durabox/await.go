package durabox

import "time"

// Await blocks the orchestration until cond returns true, and returns nil
// then. cond is checked at once, and again whenever something may have
// changed what it reads: after each step the host applies (an activity's
// result, a timer, an event, a child's end, a cancellation) once the
// orchestration's units have run as far as they can, and after another
// Await let its unit go on. It runs on the orchestration's unit, so it may
// read anything the orchestration's code writes (variables its branches
// set, Future.Ready, ctx.Err), and must only read: it runs a number of
// times that depends on what else happens. Units whose conditions hold
// after the same step go on in the order of Go's structure (the root
// first, then branches in the order they were started), the same on every
// replay.
//
// Await records nothing in history: what wakes it is the steps recorded
// anyway. It returns ErrCanceled when c's scope is cancelled (WithCancel),
// and the *CanceledError when the instance's cancellation is requested
// while it waits. An Await whose condition nothing could ever make true
// (no activity, timer, wait or child open anywhere in the orchestration)
// fails the instance as left waiting on nothing.
func (c *Context) Await(cond func() bool) error {
	c.rt.own("ctx.Await")
	_, err := c.await(cond, nil)
	return err
}

// AwaitWithTimeout is Await with a durable timer of d: it returns true as
// soon as cond holds, and false when d passes first. The timer is started
// only if cond does not hold at once; when cond wins, the timer is
// cancelled (TimerCreated and TimerCancelled are in history, as after a
// Select a timer lost), and when the timer wins, its TimerFired is. The
// error is as for Await, with false.
func (c *Context) AwaitWithTimeout(d time.Duration, cond func() bool) (bool, error) {
	c.rt.own("ctx.AwaitWithTimeout")
	if err := c.scope.err(); err != nil || cond() {
		return err == nil, err
	}
	return c.await(cond, c.NewTimer(d))
}

// await parks the running unit until cond holds (true), timer, if not nil,
// resolves first (false, with the timer's error), or the Await is ended by
// a cancellation (false, with its error).
func (c *Context) await(cond func() bool, timer *Future) (bool, error) {
	rt := c.rt
	if err := c.scope.err(); err != nil {
		return false, err
	}
	fs := make([]*Future, 1, 2)
	if timer != nil {
		fs = append(fs, timer)
	}
	for {
		if cond() {
			// The unit goes on, and may change what other conditions read.
			rt.sched.changed = true
			if timer != nil {
				timer.cancel()
			}
			return true, nil
		}
		if timer != nil && timer.resolved {
			return false, timer.err
		}
		w := &Future{rt: rt, scope: c.scope}
		rt.sched.awaits = append(rt.sched.awaits, w)
		fs[0] = w
		rt.sched.wait(fs)
		if w.err != nil {
			if timer != nil {
				timer.cancel()
			}
			return false, w.err
		}
	}
}
