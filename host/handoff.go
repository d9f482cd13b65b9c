package host

import "sync"

// Work a host hands itself. On a store with store.Handoff (both of
// Durabox's), the work a host makes for itself is taken in the commit
// that makes it, not by a fetch of its own: a start commits locked for
// this host, a turn commits with the lease of its activity tasks, and an
// activity's outcome commits with the instance's next turn (handoffTurn). What such a commit
// took goes to the dispatcher's workers through a handoff, ahead of what
// the dispatcher fetches. A commit takes work only for the workers idle
// at the time, so what it takes does not wait behind other work (its
// lease runs meanwhile) nor go ahead of what waits for a worker: when no
// worker is idle, the work is queued as on any store, for any host.

// handoff holds the work commits took for one dispatcher's workers.
type handoff[W any] struct {
	mu    sync.Mutex
	items []*W
	// idle is the dispatcher's idle workers as it last counted them, and
	// reserved the places commits under way have asked for.
	idle, reserved int
	// ready wakes the dispatcher when work is handed to it.
	ready wakeup
}

func newHandoff[W any]() *handoff[W] { return &handoff[W]{ready: newWakeup()} }

// reserve asks for up to n places for work a commit will take, and
// returns how many it got: each must be given back with give.
func (o *handoff[W]) reserve(n int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := max(0, min(n, o.idle-len(o.items)-o.reserved))
	o.reserved += k
	return k
}

// give hands the dispatcher items, taken with the k places reserve gave
// (as many or fewer: a commit that failed gives none).
func (o *handoff[W]) give(k int, items ...*W) {
	o.mu.Lock()
	o.reserved -= k
	o.items = append(o.items, items...)
	o.mu.Unlock()
	if len(items) > 0 {
		o.ready.Notify()
	}
}

// take returns up to n items handed over, oldest first, and counts the
// workers left idle once they run.
func (o *handoff[W]) take(n, idle int) []*W {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := min(n, len(o.items))
	items := o.items[:k:k]
	o.items = o.items[k:]
	o.idle = idle - k
	return items
}

// setIdle counts the dispatcher's idle workers.
func (o *handoff[W]) setIdle(idle int) {
	o.mu.Lock()
	o.idle = idle
	o.mu.Unlock()
}
