package durabox

import "slices"

// The scheduler runs orchestration code on goroutines, one at a time, so
// that the order of everything they do is a function of the activations
// alone. Each unit (the orchestration's root function, and every branch
// started with Context.Go) is a goroutine that runs only while it holds the
// turn: the scheduler hands the turn over on the unit's wake channel and
// waits on back until the unit parks (waiting on futures that are not
// resolved yet) or finishes.
//
// Work happens in rounds. A round takes the units runnable at its start,
// ordered by their ids, and gives each one step; a unit made runnable during
// a round waits for the next. Rounds repeat until no unit is runnable (the
// guest is quiescent and the activation's commands are complete) or the
// orchestration has ended. Ids are assigned by structure, not timing: the
// root is [], its branches [0], [1], …, their branches [0 0], [0 1], ….
// Only channel hand-offs are used (no select, no timers), so the scheduler
// itself draws nothing from the runtime's random stream.
//
// Only the unit holding the turn may use the SDK: every entry point checks
// that its caller runs on that unit's goroutine (runtime.own). Wake
// channels hold one hand-off, so the scheduler never blocks handing the
// turn over, only waiting for it back: whenever another goroutine runs
// during a round, the scheduler waits on back.

type unit struct {
	id   []int
	wake chan struct{}
	// g identifies the goroutine the unit runs on (see goroutine), once it
	// has started.
	g uintptr
	// branches counts the branches the unit started, to number the next.
	branches int
	// waiting are the futures the unit is parked on.
	waiting []*Future
}

type scheduler struct {
	back     chan struct{}
	runnable []*unit
	// current is the unit holding the turn.
	current *unit
	// ended is set once the orchestration has ended: no unit runs after.
	ended bool
}

func newScheduler() *scheduler {
	return &scheduler{back: make(chan struct{})}
}

// spawn creates a unit that will run fn from the next round on: the root
// when no unit runs, else a branch of the running unit.
func (s *scheduler) spawn(fn func()) {
	u := &unit{wake: make(chan struct{}, 1)}
	if p := s.current; p != nil {
		u.id = append(slices.Clip(p.id), p.branches)
		p.branches++
	}
	go func() {
		u.g = goroutine()
		<-u.wake
		defer func() { s.back <- struct{}{} }()
		fn()
	}()
	s.runnable = append(s.runnable, u)
}

// run runs rounds until no unit is runnable or the orchestration has ended.
func (s *scheduler) run() {
	for len(s.runnable) > 0 && !s.ended {
		round := s.runnable
		s.runnable = nil
		slices.SortStableFunc(round, func(a, b *unit) int { return slices.Compare(a.id, b.id) })
		for _, u := range round {
			if s.ended {
				break
			}
			s.current = u
			u.wake <- struct{}{}
			<-s.back
		}
	}
	s.current = nil
}

// wait parks the running unit until one of fs resolves. It must be called
// on that unit's goroutine.
func (s *scheduler) wait(fs []*Future) {
	u := s.current
	u.waiting = fs
	for _, f := range fs {
		f.waiters = append(f.waiters, u)
	}
	s.back <- struct{}{}
	<-u.wake
}

// wakeUnit makes a parked unit runnable, once, and forgets what it waited
// on.
func (s *scheduler) wakeUnit(u *unit) {
	for _, f := range u.waiting {
		f.waiters = slices.DeleteFunc(f.waiters, func(w *unit) bool { return w == u })
	}
	u.waiting = nil
	s.runnable = append(s.runnable, u)
}
