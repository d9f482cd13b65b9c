package sqlite

// A fetch of activity tasks (leaseSome) reads a queue's tasks in the fair
// order, (fair_rank, id), and passes over those held (leased, or their
// results kept for their instance's next turn), whose ids it excludes as
// a JSON list. A fan-out's tasks are leased in that order, so its held
// tasks are the first ones a fetch reads: each fetch passed over all of
// them, and built the list of all of them, a cost that grew with the
// tasks held (BENCHMARKS.md, the runs of 2026-11-28).
//
// A queue's floor is a place in the fair order below which every task is
// held (or gone): a fetch reads from its queue's floor, and its list of
// held tasks names only those at or past it. A fetch moves the floor past
// the last task it read when every task it passed over was held: it
// passed over no task for its filters (the modules a host cannot run, the
// names a worker takes: with those it moves nothing) nor for a retry's
// wait (visible_at in the future: it asks whether it passed one, when a
// retry or an await has written a wait past now: waitingBetween).
//
// Whatever lets a task below a floor be taken again resets every floor,
// and the fetches start from the first task again:
//   - a lease that ends without its task's removal: one that expires, one
//     let go (ReleaseAllLeases, a take undone), seen by the next fetch
//     as a held task that is held no more (view);
//   - a task that leaves the table of leases while its row stays: a retry,
//     an await of an outside completion (written), a take undone (undo);
//   - a task queued (its rank may be below a floor), once its commit has
//     ended (activityLeases.queued, commitBatch).
// A reset between a fetch's view and its move of the floor (gen) voids the
// move.

// taskKey is a task's place in the fair order.
type taskKey struct{ rank, id int64 }

// before reports whether k comes before o in the fair order.
func (k taskKey) before(o taskKey) bool {
	return k.rank < o.rank || k.rank == o.rank && k.id < o.id
}

// floors are the activity leases' floors, guarded by their mu.
type floors struct {
	// at is each queue's floor; a queue without one reads from the start.
	at map[string]taskKey
	// gen counts the resets.
	gen uint64
	// unheld is the leases a view found held no more: the floors were
	// reset for them, or they were held no more when the floors were.
	unheld map[*lease]bool
}

// fetchView is what a fetch of a queue reads past: its floor, the tasks
// held at or past it, and the floors' gen when it was taken.
type fetchView struct {
	floor taskKey
	held  []int64
	gen   uint64
}

// view returns what a fetch of queue at now reads past. It resets the
// floors first if a lease is held no more that was held at the last view
// (its task may be below a floor).
func (as *activityLeases) view(queue string, now int64) fetchView {
	as.mu.Lock()
	defer as.mu.Unlock()
	var unheld map[*lease]bool
	for _, l := range as.taken {
		if !l.held(now) {
			if unheld == nil {
				unheld = map[*lease]bool{}
			}
			unheld[l] = true
			if !as.floors.unheld[l] {
				as.resetLocked()
			}
		}
	}
	as.floors.unheld = unheld
	v := fetchView{floor: as.floors.at[queue], gen: as.floors.gen}
	for id, l := range as.taken {
		if l.held(now) && !(taskKey{l.rank, id}).before(v.floor) {
			v.held = append(v.held, id)
		}
	}
	return v
}

// advance moves queue's floor to past, a fetch's that viewed v, unless
// the floors were reset since.
func (as *activityLeases) advance(queue string, v fetchView, past taskKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.floors.gen == v.gen && v.floor.before(past) {
		as.floors.at[queue] = past
	}
}

// reset resets every queue's floor.
func (as *activityLeases) reset() {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.resetLocked()
}

func (as *activityLeases) resetLocked() {
	clear(as.floors.at)
	as.floors.gen++
}

// undo undoes a take that handed nothing out: the task stays, free.
func (as *activityLeases) undo(id int64, token string, counted bool) {
	as.leases.undo(id, token, counted)
	as.reset()
}

// written ends what write marked; a task whose commit was written and
// stays (a retry, an await) may be below a floor.
func (as *activityLeases) written(id int64, token string, ok bool) {
	as.leases.written(id, token, ok)
	if ok {
		as.reset()
	}
}
