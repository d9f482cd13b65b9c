package durabox

import "slices"

// Mutex is a lock for the units of one orchestration (its function and the
// branches it starts with Go), granted in the order they ask for it. The
// zero value is unlocked. Built on Await, it records nothing in history:
// it is part of the orchestration's state, rebuilt by every replay.
//
//	var m durabox.Mutex
//	for _, item := range items {
//		ctx.Go(func(ctx *durabox.Context) {
//			if err := m.Lock(ctx); err != nil {
//				return
//			}
//			defer m.Unlock()
//			durabox.Call[string](ctx, "UseTheSharedThing", item)
//		})
//	}
type Mutex struct {
	held bool
	// queue holds a flag for each unit waiting in Lock, oldest first; Unlock
	// sets the first unit's flag, handing the lock over. It is empty unless
	// held is set.
	queue []*bool
}

// Lock blocks until the lock is the calling unit's. It returns the error,
// without the lock and leaving the order of the others as it was, when its
// wait ends as Await's does: ctx's scope is cancelled (ErrCanceled, at once
// if it already was), or the instance's cancellation is requested while it
// waits.
func (m *Mutex) Lock(ctx *Context) error {
	ctx.rt.own("Mutex.Lock")
	if err := ctx.scope.err(); err != nil {
		return err
	}
	if !m.held {
		m.held = true
		return nil
	}
	granted := new(bool)
	m.queue = append(m.queue, granted)
	if err := ctx.Await(func() bool { return *granted }); err != nil {
		if *granted {
			m.Unlock()
		} else {
			m.queue = slices.DeleteFunc(m.queue, func(g *bool) bool { return g == granted })
		}
		return err
	}
	return nil
}

// Unlock releases the lock, to the unit that has waited longest in Lock if
// there is one. Unlocking a Mutex that is not locked panics (which fails
// the instance).
func (m *Mutex) Unlock() {
	if !m.held {
		panic("durabox: Unlock of a Mutex that is not locked")
	}
	if len(m.queue) == 0 {
		m.held = false
		return
	}
	*m.queue[0] = true
	m.queue = m.queue[1:]
}
