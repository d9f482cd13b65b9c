package durabox

import (
	"iter"
	goruntime "runtime"
	"slices"
)

// The scheduler runs orchestration code as coroutines, one at a time, so
// that the order of everything they do is a function of the activations
// alone. Each unit (the orchestration's root function, and every branch
// started with Context.Go) is a coroutine (iter.Pull) that runs only while
// it holds the turn: the scheduler hands the turn over by resuming it, and
// gets it back when the unit parks (waiting on futures that are not
// resolved yet) or finishes. A coroutine switch costs a tenth of a hand-off
// through channels in wasm (RATIONALE.md, "Why are an orchestration's units
// coroutines…?").
//
// Work happens in rounds. A round takes the units runnable at its start,
// ordered by their ids, and gives each one step; a unit made runnable during
// a round waits for the next. Rounds repeat until no unit is runnable (the
// guest is quiescent and the activation's commands are complete) or the
// orchestration has ended. Ids are assigned by structure, not timing: the
// root is [], its branches [0], [1], …, their branches [0 0], [0 1], ….
// The scheduler uses no select and no timers, so it draws nothing from the
// runtime's random stream.
//
// Units parked in Context.Await wait on a future of no operation each (an
// await), which the scheduler resolves once the rounds have run out and
// something may have changed what their conditions read since they last
// checked: an activation was applied, or a unit ran other than to find its
// condition still false. Each then checks its condition again, in the
// order of ids, in the next round; one that holds lets its unit go on, and
// another pass follows, until a pass lets no unit go on.
//
// A coroutine switch does not pass through the Go scheduler, so after each
// step the scheduler yields the thread (runtime.Gosched): goroutines the
// orchestration started with a go statement, finalizers and the collector's
// workers run there, as they did at every hand-off when the units were
// goroutines.
//
// Only the unit holding the turn may use the SDK: every entry point checks
// that its caller runs on that unit's coroutine (runtime.own). A unit that
// stops without returning (runtime.Goexit), or another goroutine that
// calls the SDK while a unit holds the turn, gives the turn back with
// release, so that the scheduler, waiting for it, goes on.

type unit struct {
	id []int
	// resume runs the unit until it parks or finishes; park hands the turn
	// back from inside it (iter.Pull's next and yield).
	resume func() (struct{}, bool)
	park   func(struct{}) bool
	// g identifies the goroutine the unit's coroutine runs on (see
	// goroutine), once it has started.
	g uintptr
	// branches counts the branches the unit started, to number the next.
	branches int
	// waiting are the futures the unit is parked on.
	waiting []*Future
	// recheck is set when the scheduler wakes the unit only to check its
	// Await's condition again.
	recheck bool
}

type scheduler struct {
	runnable []*unit
	// spare is the slice of the last round, kept for runnable to reuse.
	spare []*unit
	// current is the unit holding the turn: the scheduler is inside its
	// resume.
	current *unit
	// ended is set once the orchestration has ended: no unit runs after.
	ended bool
	// awaits are the futures the units parked in Await wait on, in the
	// order they parked (some may have resolved since); changed is set
	// when a condition may have changed since they were last checked.
	awaits  []*Future
	changed bool
}

func newScheduler() *scheduler { return &scheduler{} }

// spawn creates a unit that will run fn from the next round on: the root
// when no unit runs, else a branch of the running unit. fn must not let a
// panic or runtime.Goexit out (runtime.guard): iter.Pull would carry either
// into the scheduler.
func (s *scheduler) spawn(fn func()) {
	u := &unit{}
	if p := s.current; p != nil {
		u.id = append(slices.Clip(p.id), p.branches)
		p.branches++
	}
	u.resume, _ = iter.Pull(func(park func(struct{}) bool) {
		u.g, u.park = goroutine(), park
		fn()
	})
	s.runnable = append(s.runnable, u)
}

// spawnAs creates a unit of id that will run fn from the next round on,
// as spawn does, outside the structure of branches: an update's handler,
// which the host, not a unit, starts.
func (s *scheduler) spawnAs(id []int, fn func()) {
	s.spawn(fn)
	s.runnable[len(s.runnable)-1].id = id
}

// run runs rounds until no unit is runnable or the orchestration has
// ended, and wakes the units parked in Await to check their conditions,
// again and again, while that lets one go on.
func (s *scheduler) run() {
	for {
		s.rounds()
		if s.ended || !s.changed || len(s.awaits) == 0 {
			return
		}
		s.changed = false
		awaits := s.awaits
		s.awaits = nil
		for _, w := range awaits {
			if len(w.waiters) > 0 {
				w.waiters[0].recheck = true
			}
			w.settle(nil, nil)
		}
	}
}

// endAwaits resolves with err the awaits of the units parked in Await that
// match, so that each returns err.
func (s *scheduler) endAwaits(match func(*Future) bool, err error) {
	for _, w := range s.awaits {
		if match(w) {
			w.settle(nil, err)
		}
	}
}

// rounds runs rounds until no unit is runnable or the orchestration has
// ended.
func (s *scheduler) rounds() {
	for len(s.runnable) > 0 && !s.ended {
		round := s.runnable
		s.runnable = s.spare
		slices.SortStableFunc(round, func(a, b *unit) int { return slices.Compare(a.id, b.id) })
		for _, u := range round {
			if s.ended {
				break
			}
			if !u.recheck {
				s.changed = true
			}
			u.recheck = false
			s.current = u
			u.resume()
			s.current = nil
			goruntime.Gosched()
		}
		clear(round)
		s.spare = round[:0]
	}
}

// wait parks the running unit until one of fs resolves. It must be called
// on that unit's coroutine.
func (s *scheduler) wait(fs []*Future) {
	u := s.current
	u.waiting = fs
	for _, f := range fs {
		if f.waiters == nil {
			f.waiters = f.firstWaiter[:0]
		}
		f.waiters = append(f.waiters, u)
	}
	u.park(struct{}{})
}

// release gives the turn back to the scheduler for good, from a goroutine
// that must never run SDK code again: the unit holding it, as it stops
// without returning, or another goroutine that called the SDK while the
// unit was blocked outside it (the unit cannot be running: guests have one
// thread). The caller takes the unit's place in its coroutine and stays
// there, since the orchestration has ended and no unit is resumed after.
// With no unit holding the turn, the scheduler is not waiting for it, and
// release returns at once.
func (s *scheduler) release() {
	if u := s.current; u != nil {
		u.park(struct{}{})
	}
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
