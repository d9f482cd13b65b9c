package host

import "sync"

// changes wakes the goroutines waiting for an instance to change: a Wait
// caller is woken by a change of its own instance, not by every commit of
// every instance, which woke each of n waiters (and had each read its
// instance again) n times as often as it had to. A waiter for the
// instance's end (watchEnd) is not woken by a turn that leaves it running
// (progressed), so a Wait on a long sequence of steps reads its instance
// twice, not once a step.
type changes struct {
	mu sync.Mutex
	// ids are the watchers of every change, ends those of the changes
	// that may end the instance.
	ids, ends map[string]*watchers
}

// watchers are the goroutines watching one instance: c is closed at its
// next change, n counts them.
type watchers struct {
	c chan struct{}
	n int
}

func newChanges() *changes {
	return &changes{ids: map[string]*watchers{}, ends: map[string]*watchers{}}
}

// watch returns a channel closed at the next change of instance id, and
// the function that stops watching, which the caller must call.
func (c *changes) watch(id string) (changed <-chan struct{}, stop func()) {
	return c.add(c.ids, id)
}

// watchEnd returns a channel closed at the next change of instance id
// that may have ended it (notify), and the function that stops watching,
// which the caller must call.
func (c *changes) watchEnd(id string) (changed <-chan struct{}, stop func()) {
	return c.add(c.ends, id)
}

func (c *changes) add(m map[string]*watchers, id string) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := m[id]
	if w == nil {
		w = &watchers{c: make(chan struct{})}
		m[id] = w
	}
	w.n++
	return w.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if w.n--; w.n == 0 && m[id] == w {
			delete(m, id)
		}
	}
}

// notify wakes the goroutines watching instance id, for any change.
func (c *changes) notify(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wake(c.ids, id)
	wake(c.ends, id)
}

// progressed wakes the goroutines watching every change of instance id,
// for a turn that left it running: none of those watching for its end.
func (c *changes) progressed(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wake(c.ids, id)
}

// wake closes the channel of the watchers of id in m (called with mu
// held).
func wake(m map[string]*watchers, id string) {
	if w := m[id]; w != nil {
		close(w.c)
		delete(m, id)
	}
}

// wakeup wakes one of the workers waiting for work: Notify leaves a token
// that one waiter takes, or the next worker to wait, if none waits now. A
// worker that finds work passes the token on (dispatch), so workers join in
// one by one while there is work, instead of every worker polling the store
// at every Notify.
type wakeup chan struct{}

func newWakeup() wakeup { return make(wakeup, 1) }

// Notify wakes one waiter.
func (w wakeup) Notify() {
	select {
	case w <- struct{}{}:
	default:
	}
}
