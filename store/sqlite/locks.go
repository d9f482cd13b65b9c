package sqlite

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"sync"
)

// Instance locks live in memory. The file belongs to one store at a time
// (filelock.go), so no other process can take an instance, and a lock
// that no process holds any more is one that ended with the process: a
// restarted store starts with every instance unlocked, as ReleaseAllLeases
// would leave them. Locking an instance therefore writes nothing, and
// neither does letting it go.
//
// What must survive a crash is the count of deliveries since the
// instance's last commit (store.WorkItem.Attempt), which gives up on a turn
// that kills its host every time it runs. A commit counts the next
// delivery in advance: it leaves attempt at 1 and names the store's run
// (a random number drawn at Open) in counted_run. The first lock after it
// in the same run takes that delivery and writes nothing; any other lock
// (a second one since the commit, after an abandon or an expired lock, or
// the first one in a new run, which cannot know whether the run before
// took the counted delivery) adds one to attempt before handing the
// instance out, in one write for the whole batch. A crash between a
// commit and the next lock thus counts one delivery that did not happen:
// the verdict on poison work may come one delivery early, never late.

// instanceLocks is the store's table of instance locks.
type instanceLocks struct {
	// run identifies this store's run in counted_run.
	run int64

	mu sync.Mutex
	// taken holds the instances whose counted delivery this run has
	// handed out since their last commit: locked, or unlocked again by an
	// abandon, an expiry or ReleaseAllLeases.
	taken map[string]*instanceLock
	// operating holds the instances a move or a reset is writing: no turn
	// may take them until it has committed.
	operating map[string]bool
}

// instanceLock is one instance's lock.
type instanceLock struct {
	// token is the lock's token; "" when the instance is unlocked.
	token string
	// until is when the lock expires (Unix nanoseconds).
	until int64
	// committing is set while the holder's commit is being written: the
	// lock holds past until, so that nobody takes the instance and reads
	// what the commit is changing.
	committing bool
}

func newInstanceLocks() *instanceLocks {
	var b [8]byte
	rand.Read(b[:])
	return &instanceLocks{
		run:       int64(binary.LittleEndian.Uint64(b[:]) & math.MaxInt64),
		taken:     map[string]*instanceLock{},
		operating: map[string]bool{},
	}
}

// held reports whether l holds its instance at now.
func (l *instanceLock) held(now int64) bool {
	return l != nil && l.token != "" && (l.committing || l.until > now)
}

// busy reports whether a lock or an operation holds the instance at now.
func (ls *instanceLocks) busy(id string, now int64) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.operating[id] || ls.taken[id].held(now)
}

// lock locks the instance until until with token, unless it is busy at
// now. counted reports whether the delivery the instance's last commit
// counted in advance is still to be taken, if this run made that commit.
func (ls *instanceLocks) lock(id, token string, now, until int64) (ok, counted bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.taken[id]
	if ls.operating[id] || l.held(now) {
		return false, false
	}
	counted = l == nil
	ls.taken[id] = &instanceLock{token: token, until: until}
	return true, counted
}

// unlock undoes a lock that handed nothing out: the instance had no work
// after all. counted is what lock returned.
func (ls *instanceLocks) unlock(id, token string, counted bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.taken[id]; l != nil && l.token == token {
		if counted {
			delete(ls.taken, id)
		} else {
			l.token = ""
		}
	}
}

// abandon unlocks the instance if token holds it and is not committing.
func (ls *instanceLocks) abandon(id, token string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.taken[id]; l != nil && l.token == token && !l.committing {
		l.token = ""
	}
}

// commit marks the lock of token as committing; it reports false when
// token does not hold the instance's lock (it expired and went to another,
// or was released).
func (ls *instanceLocks) commit(id, token string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.taken[id]
	if l == nil || l.token == "" || l.token != token {
		return false
	}
	l.committing = true
	return true
}

// committed ends the commit commit marked: the instance is unlocked, with
// its next delivery counted when the commit was written (ok), or locked
// as before when it was not.
func (ls *instanceLocks) committed(id, token string, ok bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.taken[id]
	if l == nil || l.token != token || !l.committing {
		return
	}
	if ok {
		delete(ls.taken, id)
	} else {
		l.committing = false
	}
}

// operate marks the instance as being moved or reset, so that no turn
// takes it meanwhile, and returns when the lock a turn has on it expires,
// if one has (math.MaxInt64 while its commit is being written; 0 when
// none has): the operation must not go on while that lock holds.
func (ls *instanceLocks) operate(id string) (lockedUntil int64) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.operating[id] = true
	switch l := ls.taken[id]; {
	case l == nil || l.token == "":
		return 0
	case l.committing:
		return math.MaxInt64
	default:
		return l.until
	}
}

// operated ends what operate marked. When the operation committed (ok), a
// lock that expired is void; a reset (recounted) also counted the
// instance's next delivery in advance.
func (ls *instanceLocks) operated(id string, ok, recounted bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.operating, id)
	l := ls.taken[id]
	switch {
	case !ok || l == nil || l.committing:
	case recounted:
		delete(ls.taken, id)
	default:
		l.token = ""
	}
}

// releaseAll unlocks every instance no commit is writing.
func (ls *instanceLocks) releaseAll() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, l := range ls.taken {
		if !l.committing {
			l.token = ""
		}
	}
}

// next returns the earliest expiry after now of a lock, if any.
func (ls *instanceLocks) next(now int64) (int64, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	next, ok := int64(math.MaxInt64), false
	for _, l := range ls.taken {
		if l.token != "" && !l.committing && l.until > now {
			next, ok = min(next, l.until), true
		}
	}
	return next, ok
}

// count returns how many instances are locked at now.
func (ls *instanceLocks) count(now int64) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, l := range ls.taken {
		if l.held(now) {
			n++
		}
	}
	return n
}

// activityLeases is the store's table of activity leases, in memory for
// the reasons instance locks are. A task's deliveries are counted as an
// instance's are: QueueActivities counts the first in advance (attempt 1,
// counted_run), and any other lease adds one before the task is handed out.
type activityLeases struct {
	// fetching serializes LockNextActivities, so that a task one reads as
	// waiting has either been leased by an earlier one (and is on the
	// list of held tasks it passes over) or was completed before its read
	// began (and is not there to read).
	fetching sync.Mutex

	mu sync.Mutex
	// taken holds the tasks whose counted delivery this run has handed
	// out, leased or let go (token ""), until they are completed.
	taken map[int64]*activityLease
}

// activityLease is one task's lease.
type activityLease struct {
	// token is the lease's token; "" when no worker holds the task.
	token string
	// until is when the lease expires (Unix nanoseconds).
	until int64
	// completing is set while the holder's result is being written: the
	// lease holds past until.
	completing bool
	// kept is set when the task's result is kept in memory for its
	// instance's next turn (results.go): nobody may lease it again.
	kept bool
}

func newActivityLeases() *activityLeases {
	return &activityLeases{taken: map[int64]*activityLease{}}
}

// held reports whether a worker holds the task at now, or its result is
// kept.
func (l *activityLease) held(now int64) bool {
	return l != nil && (l.kept || l.token != "" && (l.completing || l.until > now))
}

// held returns the tasks workers hold at now (with anyLease, those with a
// lease, expired or not). A task leaves the list only once its result is
// committed.
func (as *activityLeases) held(now int64, anyLease bool) []int64 {
	as.mu.Lock()
	defer as.mu.Unlock()
	var ids []int64
	for id, l := range as.taken {
		if l.held(now) || anyLease && l.token != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// lease leases the task until until with token, unless it is held at
// now; counted reports whether its delivery was counted in advance, if
// this run queued it.
func (as *activityLeases) lease(id int64, token string, now, until int64) (ok, counted bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.taken[id]
	if l.held(now) {
		return false, false
	}
	as.taken[id] = &activityLease{token: token, until: until}
	return true, l == nil
}

// extend moves the lease of token to until; false when token does not
// hold the task.
func (as *activityLeases) extend(id int64, token string, until int64) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.taken[id]
	if l == nil || l.token == "" || l.token != token || l.completing {
		return false
	}
	l.until = max(l.until, until)
	return true
}

// unlease undoes a lease that handed nothing out; counted is what lease
// returned.
func (as *activityLeases) unlease(id int64, token string, counted bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if l := as.taken[id]; l != nil && l.token == token {
		if counted {
			delete(as.taken, id)
		} else {
			l.token = ""
		}
	}
}

// complete marks the lease of token as completing; false when token does
// not hold the task.
func (as *activityLeases) complete(id int64, token string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.taken[id]
	if l == nil || l.token == "" || l.token != token || l.completing {
		return false
	}
	l.completing = true
	return true
}

// keep marks the task's result as kept for its instance, if token holds
// the task and keep, called then, keeps it; false when token does not hold
// the task. kept reports whether the result was kept.
func (as *activityLeases) keep(id int64, token string, keep func() bool) (held, kept bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.taken[id]
	if l == nil || l.token == "" || l.token != token || l.completing {
		return false, false
	}
	if !keep() {
		return true, false
	}
	l.token, l.kept = "", true
	return true, true
}

// forget forgets a task whose kept result was committed or dropped.
func (as *activityLeases) forget(id int64) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.taken, id)
}

// running counts the tasks workers hold at now.
func (as *activityLeases) running(now int64) int {
	as.mu.Lock()
	defer as.mu.Unlock()
	n := 0
	for _, l := range as.taken {
		if l.held(now) && !l.kept {
			n++
		}
	}
	return n
}

// completed ends what complete marked: the task is forgotten when its
// result was committed (ok), and leased as before when it was not.
func (as *activityLeases) completed(id int64, token string, ok bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.taken[id]
	if l == nil || l.token != token || !l.completing {
		return
	}
	if ok {
		delete(as.taken, id)
	} else {
		l.completing = false
	}
}

// releaseAll lets every task go that no result is being written for.
func (as *activityLeases) releaseAll() {
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, l := range as.taken {
		if !l.completing {
			l.token = ""
		}
	}
}

// next returns the earliest expiry after now of a lease, if any.
func (as *activityLeases) next(now int64) (int64, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	next, ok := int64(math.MaxInt64), false
	for _, l := range as.taken {
		if l.token != "" && !l.completing && l.until > now {
			next, ok = min(next, l.until), true
		}
	}
	return next, ok
}
