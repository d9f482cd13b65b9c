package durabox

// The scheduler runs orchestration code on goroutines, one at a time, so
// that the order of everything they do is a function of the activations
// alone. Each unit (the orchestration's root function, and later its
// branches) is a goroutine that runs only while it holds the turn: the
// scheduler hands the turn over on the unit's wake channel and waits on
// back until the unit parks (awaiting a future that is not resolved yet) or
// finishes.
//
// Work happens in rounds. A round takes the units runnable at its start, in
// the order they became runnable, and gives each one step; a unit made
// runnable during a round waits for the next. Rounds repeat until no unit is
// runnable: the guest is quiescent and the activation's commands are
// complete. Only channel hand-offs are used (no select, no timers), so the
// scheduler itself draws nothing from the runtime's random stream.

type unit struct {
	wake chan struct{}
}

type scheduler struct {
	back     chan struct{}
	runnable []*unit
	// current is the unit holding the turn.
	current *unit
}

func newScheduler() *scheduler {
	return &scheduler{back: make(chan struct{})}
}

// spawn creates a unit that will run fn from the next round on.
func (s *scheduler) spawn(fn func()) *unit {
	u := &unit{wake: make(chan struct{})}
	go func() {
		<-u.wake
		fn()
		s.back <- struct{}{}
	}()
	s.ready(u)
	return u
}

// ready makes a parked unit runnable.
func (s *scheduler) ready(u *unit) { s.runnable = append(s.runnable, u) }

// run runs rounds until no unit is runnable.
func (s *scheduler) run() {
	for len(s.runnable) > 0 {
		round := s.runnable
		s.runnable = nil
		for _, u := range round {
			s.current = u
			u.wake <- struct{}{}
			<-s.back
		}
	}
	s.current = nil
}

// park gives up the turn of the current unit until something makes it
// runnable again. It must be called on that unit's goroutine.
func (s *scheduler) park() {
	u := s.current
	s.back <- struct{}{}
	<-u.wake
}
