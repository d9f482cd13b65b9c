package host

import "sync"

// changes wakes the goroutines waiting for an instance to change: a Wait
// caller is woken by a change of its own instance, not by every commit of
// every instance, which woke each of n waiters (and had each read its
// instance again) n times as often as it had to.
type changes struct {
	mu  sync.Mutex
	ids map[string]*watchers
}

// watchers are the goroutines watching one instance: c is closed at its
// next change, n counts them.
type watchers struct {
	c chan struct{}
	n int
}

func newChanges() *changes { return &changes{ids: map[string]*watchers{}} }

// watch returns a channel closed at the next change of instance id, and
// the function that stops watching, which the caller must call.
func (c *changes) watch(id string) (changed <-chan struct{}, stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.ids[id]
	if w == nil {
		w = &watchers{c: make(chan struct{})}
		c.ids[id] = w
	}
	w.n++
	return w.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if w.n--; w.n == 0 && c.ids[id] == w {
			delete(c.ids, id)
		}
	}
}

// notify wakes the goroutines watching instance id.
func (c *changes) notify(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.ids[id]; w != nil {
		close(w.c)
		delete(c.ids, id)
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
