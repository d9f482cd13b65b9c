package host

import "sync"

// signal wakes every goroutine waiting on it: waiters take C, and Notify
// closes it and makes a new one.
type signal struct {
	mu sync.Mutex
	c  chan struct{}
}

func newSignal() *signal { return &signal{c: make(chan struct{})} }

// C returns a channel closed at the next Notify.
func (s *signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// Notify wakes everyone waiting.
func (s *signal) Notify() {
	s.mu.Lock()
	close(s.c)
	s.c = make(chan struct{})
	s.mu.Unlock()
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
