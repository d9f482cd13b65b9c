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
