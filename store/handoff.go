package store

import (
	"context"
	"time"

	"github.com/durabox/durabox/engine"
)

// Handoff is what a store offers so that the work a host makes for
// itself costs no fetch to take and, where every write is a transaction
// of its own on a database server (store/postgres), no transaction of its
// own: a start commits locked for its host, or with its first turn, a
// turn commits with the lease of the activity tasks it queued, and an
// activity's outcome commits with its instance's next turn. store/sqlite, whose locks, leases and results
// are in memory, takes them in memory around its commits. A host uses it
// when its store has it (a type assertion) and it has workers idle to
// take what it hands itself; everything it does is what the plain calls
// in a row would do, in one transaction.
type Handoff interface {
	// CreateLocked is CreateInstance that also locks the new instance
	// for this host until n.Now+lease, in the same transaction, and
	// returns its first turn's work item (with its start message), as
	// LockNextInstances would.
	CreateLocked(ctx context.Context, n NewInstance, lease time.Duration) (*WorkItem, error)
	// CreateAndTurn is CreateLocked of n followed, in the same
	// transaction, by CommitTurnLeasing of its first turn: the one next
	// makes of the work item CreateLocked would return, with lease and
	// the max next returns with it. next runs before the instance is
	// written, so nobody else can see it or take it meanwhile; it may
	// call the store. A start message the turn consumes is never
	// written. When next returns no commit (it ran no turn), nothing is
	// written and CreateAndTurn reports false, for the caller to create
	// the instance as usual. Otherwise it returns what CreateInstance and
	// CommitTurnLeasing would: ErrInstanceExists if the id is taken, or an
	// error wrapping ErrNotFound if n's module is not deployed, and then
	// it has written nothing; or the tasks it leased.
	CreateAndTurn(ctx context.Context, n NewInstance, lease time.Duration,
		next func(*WorkItem) (c *TurnCommit, max int)) (turned bool, leased []*ActivityWork, err error)
	// CommitTurnLeasing is CommitTurn that also leases to this host,
	// until c.Now+lease (LeaseFor), up to max (0: none) of the tasks the
	// commit queues on the host's own queue (engine.ActivityTask.Queue
	// empty), in the order c.Activities has them, and returns them, as
	// LockNextActivities would.
	CommitTurnLeasing(ctx context.Context, c TurnCommit, lease time.Duration, max int) ([]*ActivityWork, error)
	// CompleteAndTurn is CompleteActivity followed, in the same
	// transaction, when no one holds the instance of w and it runs the
	// execution w belongs to, by its lock until now+lease, or for the
	// transaction alone (store/postgres: its row's lock, so that the
	// commit writes the row once), with every message visible at now
	// (the result among them), the turn next makes of that work item,
	// and CommitTurnLeasing of it with lease and the max next returns
	// with it. When next returns no commit (it
	// ran no turn), the instance is unlocked again and only the result
	// is recorded, as CompleteActivity records it. It reports whether
	// the turn committed. next runs while the instance's row is locked:
	// it must not call the store. It may run more than once, when the
	// transaction runs again after a failure before its commit; only
	// the last call's turn is committed. An error means the outcome was
	// not recorded, unless it wraps ErrTurnNotCommitted.
	CompleteAndTurn(ctx context.Context, w *ActivityWork, result engine.Event, now time.Time, lease time.Duration,
		next func(*WorkItem) (c *TurnCommit, max int)) (turned bool, leased []*ActivityWork, err error)
}

// Watcher is what a store several hosts share offers (store/postgres:
// LISTEN/NOTIFY) to tell each host of the work the others commit, so that
// it takes it at once rather than at its next poll.
type Watcher interface {
	// Watch listens for the work other hosts commit until ctx ends, and
	// calls wake with what became ready: the ready instances' turns, the
	// tasks of the hosts' own queue, or those of a task queue. It
	// returns once it listens (or ctx ended), and goes on listening in
	// the background. When it loses its connection it connects again;
	// meanwhile Listening reports false, and the host must poll. When it
	// listens again it calls wake with everything, for what it missed.
	Watch(ctx context.Context, wake func(Ready))
	// Listening reports whether Watch listens now.
	Listening() bool
}

// Ready is what a Watcher tells of: what another host's commit made
// ready for any host.
type Ready struct {
	// Turns: instances have messages (a start, an event, an activity's
	// result, a child's end) or came free.
	Turns bool
	// Activities: tasks of the hosts' own queue wait, or will at a time
	// (a retry).
	Activities bool
	// Queues are the task queues whose tasks wait for workers outside the
	// hosts.
	Queues []string
}
