package sqlite

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/durabox/durabox/store"
)

// Instance locks and activity leases live in memory. The file belongs to
// one store at a time (filelock.go), so no other process can take work,
// and a lock that no process holds any more is one that ended with the
// process: a restarted store starts with all work free, as
// ReleaseAllLeases would leave it. Taking work therefore writes nothing,
// and neither does letting it go.
//
// What must survive a crash is the count of deliveries since the work's
// last commit (store.WorkItem.Attempt, store.ActivityWork.Attempt), which
// gives up on work that kills its host every time it runs. A commit (of a
// turn, or one that queues an activity) counts the next delivery in
// advance: it leaves attempt at 1 and names the store's run (a random
// number drawn at Open) in counted_run. The first take after it in the
// same run takes that delivery and writes nothing; any other (a second one
// since the commit, after an abandon or an expired lease, or the first one
// in a new run, which cannot know whether the run before took the counted
// delivery) adds one to attempt before handing the work out, in one write
// for the whole batch. A crash between a commit and the next take thus
// counts one delivery that did not happen: the verdict on poison work may
// come one delivery early, never late.

// newRun draws the number that names a store's run in counted_run.
func newRun() int64 {
	var b [8]byte
	rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]) & math.MaxInt64)
}

// lease is the lock of an instance or the lease of an activity task.
type lease struct {
	// token is the lease's token; "" when nobody holds the work.
	token string
	// until is when the lease expires (Unix nanoseconds).
	until int64
	// writing is set while the holder's commit (a turn's, an activity's
	// result) is being written: the lease holds past until, so that
	// nobody takes the work and reads what the commit is changing.
	writing bool
	// kept is set when an activity's result is kept in memory for its
	// instance's next turn (results.go): nobody may lease the task again.
	kept bool
	// rank is an activity task's fair rank (floor.go).
	rank int64
}

// held reports whether l holds its work at now.
func (l *lease) held(now int64) bool {
	return l != nil && (l.kept || l.token != "" && (l.writing || l.until > now))
}

// leases is a table of leases, of instances (K is their id) or of
// activity tasks (their id). taken holds the work whose counted delivery
// this run has handed out since its last commit: held, or let go again by
// an abandon, an expiry or ReleaseAllLeases.
type leases[K comparable] struct {
	mu    sync.Mutex
	taken map[K]*lease
}

func newLeases[K comparable]() leases[K] { return leases[K]{taken: map[K]*lease{}} }

// take leases the work until until with token, unless it is held at now
// or blocked (called with mu held) says no; counted reports whether the
// delivery its last commit counted in advance is still to be taken, if
// this run made that commit. rank is an activity task's fair rank.
func (ls *leases[K]) take(id K, rank int64, token string, now, until int64, blocked func(K) bool) (ok, counted bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.taken[id]
	if l.held(now) || blocked != nil && blocked(id) {
		return false, false
	}
	ls.taken[id] = &lease{token: token, until: until, rank: rank}
	return true, l == nil
}

// undo undoes a take that handed nothing out; counted is what take
// returned.
func (ls *leases[K]) undo(id K, token string, counted bool) {
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

// holding returns the lease token holds, with mu held, or nil when token
// does not hold the work (its lease went to another, or was let go) or
// its commit is being written.
func (ls *leases[K]) holding(id K, token string) *lease {
	l := ls.taken[id]
	if l == nil || l.token == "" || l.token != token || l.writing {
		return nil
	}
	return l
}

// write marks the lease of token as writing its commit; false when token
// does not hold the work.
func (ls *leases[K]) write(id K, token string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.holding(id, token)
	if l != nil {
		l.writing = true
	}
	return l != nil
}

// written ends what write marked: the work is forgotten, its next
// delivery counted, when the commit was written (ok), and held as before
// when it was not.
func (ls *leases[K]) written(id K, token string, ok bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.taken[id]
	switch {
	case l == nil || l.token != token || !l.writing:
	case ok:
		delete(ls.taken, id)
	default:
		l.writing = false
	}
}

// releaseAll lets go of all work no commit is writing.
func (ls *leases[K]) releaseAll() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, l := range ls.taken {
		if !l.writing {
			l.token = ""
		}
	}
}

// next returns the earliest expiry after now of a lease, if any.
func (ls *leases[K]) next(now int64) (int64, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	next, ok := int64(math.MaxInt64), false
	for _, l := range ls.taken {
		if l.token != "" && !l.writing && l.until > now {
			next, ok = min(next, l.until), true
		}
	}
	return next, ok
}

// count returns how many leases hold their work at now (results kept
// aside).
func (ls *leases[K]) count(now int64) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, l := range ls.taken {
		if l.held(now) && !l.kept {
			n++
		}
	}
	return n
}

// instanceLocks is the store's table of instance locks.
type instanceLocks struct {
	leases[string]
	// operating holds the instances a move or a reset is writing: no turn
	// may take them until it has committed. Guarded by mu.
	operating map[string]bool
}

func newInstanceLocks() *instanceLocks {
	return &instanceLocks{leases: newLeases[string](), operating: map[string]bool{}}
}

// busy reports whether a lock or an operation holds the instance at now.
func (ls *instanceLocks) busy(id string, now int64) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.operating[id] || ls.taken[id].held(now)
}

// lock locks the instance until until with token, unless it is busy at
// now (take).
func (ls *instanceLocks) lock(id, token string, now, until int64) (ok, counted bool) {
	return ls.take(id, 0, token, now, until, func(id string) bool { return ls.operating[id] })
}

// abandon unlocks the instance if token holds it and is not committing.
func (ls *instanceLocks) abandon(id, token string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.holding(id, token); l != nil {
		l.token = ""
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
	case l.writing:
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
	case !ok || l == nil || l.writing:
	case recounted:
		delete(ls.taken, id)
	default:
		l.token = ""
	}
}

// activityLeases is the store's table of activity leases.
type activityLeases struct {
	// fetching serializes LockNextActivities, so that a task one reads as
	// waiting has either been leased by an earlier one (and is on the
	// list of held tasks it passes over) or was completed before its read
	// began (and is not there to read).
	fetching sync.Mutex
	leases[int64]
	floors floors
	// queued is set by a write that queues tasks, for its batch's commit
	// to reset the floors once it has ended (floor.go).
	queued atomic.Bool
	// fetched counts the fetches that have ended having leased tasks
	// (lockActivities), and recent holds the instances whose tasks the
	// last of them leased, for a commit's lease of its own tasks
	// (leaseQueued) to know whether one could have taken them first. Both
	// are guarded by fetching (fetched is also read as a commit is
	// written).
	fetched atomic.Uint64
	recent  [recentFetches]fetchedOf
	// waitsUntil is the latest time a task was written to wait until
	// (visible_at: a retry's, an await's of an outside completion), in
	// this run or, read as the store opened, before it: no task waits past
	// it. It is raised before the write commits, so a fetch that could
	// read the write knows of it.
	waitsUntil atomic.Int64
}

// waitUntil notes a task written to wait until at.
func (as *activityLeases) waitUntil(at int64) {
	for {
		was := as.waitsUntil.Load()
		if at <= was || as.waitsUntil.CompareAndSwap(was, at) {
			return
		}
	}
}

// recentFetches is how many fetches' instances activityLeases keeps.
const recentFetches = 64

// fetchedOf is the instances whose tasks a fetch leased, and its number.
type fetchedOf struct {
	n         uint64
	instances []string
}

// fetchedTasks counts a fetch that leased ws, if any, and keeps their
// instances; fetching must be held.
func (as *activityLeases) fetchedTasks(ws []*store.ActivityWork) {
	if len(ws) == 0 {
		return
	}
	n := as.fetched.Add(1)
	f := &as.recent[n%recentFetches]
	f.n, f.instances = n, f.instances[:0]
	for _, w := range ws {
		if !slices.Contains(f.instances, w.InstanceID) {
			f.instances = append(f.instances, w.InstanceID)
		}
	}
}

// fetchedSince reports whether a fetch that ended after the first since
// fetches leased a task of instance id (or may have: it keeps the last
// recentFetches); fetching must be held.
func (as *activityLeases) fetchedSince(since uint64, id string) bool {
	n := as.fetched.Load()
	if n-since > recentFetches {
		return true
	}
	for k := since + 1; k <= n; k++ {
		if slices.Contains(as.recent[k%recentFetches].instances, id) {
			return true
		}
	}
	return false
}

func newActivityLeases() *activityLeases {
	return &activityLeases{leases: newLeases[int64](), floors: floors{at: map[string]taskKey{}}}
}

// held returns the tasks workers hold at now (with anyLease, those with a
// lease, expired or not), or whose results are kept. A task leaves the
// list only once its result is committed.
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

// extend moves the lease of token to until; false when token does not
// hold the task.
func (as *activityLeases) extend(id int64, token string, until int64) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.holding(id, token)
	if l != nil {
		l.until = max(l.until, until)
	}
	return l != nil
}

// keep marks the task's result as kept for its instance, if token holds
// the task and keep, called then, keeps it. held reports whether token
// holds the task, kept whether the result was kept.
func (as *activityLeases) keep(id int64, token string, keep func() bool) (held, kept bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	l := as.holding(id, token)
	if l == nil {
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
