package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// Handing a host the work it makes for itself (store.Handoff). The locks
// and leases are in memory (locks.go) and an activity's result is kept
// there (results.go), so none of this costs a commit of its own: what it
// saves is the fetches, each a query and a hand-off between threads. A
// start is locked for its host before its commit makes it visible; a
// turn's commit is followed by the lease of its tasks, under the lock that
// serializes the fetches of tasks (a start whose first turn commits with it
// is locked inside that one write); an activity's outcome is kept, and the
// instance's next turn made of it and committed, on the thread that ran
// the activity. A sequence of activities thus runs on one thread, with one
// commit a step and no fetch.
var _ store.Handoff = (*Store)(nil)

// CreateLocked creates the instance n, as CreateInstance does, locked for
// this host until n.Now+lease, and returns its first turn's work item.
// The lock is taken before the commit makes the instance visible, so no
// fetch takes it first.
func (s *Store) CreateLocked(ctx context.Context, n store.NewInstance, lease time.Duration) (*store.WorkItem, error) {
	t := &taken{item: &store.WorkItem{LockToken: sqlstore.NewToken()}}
	t.item.Instance.ID = n.ID
	at, until := sqlstore.Nanos(n.Now), sqlstore.Nanos(n.Now.Add(lease))
	locked := false
	err := s.writeThen(ctx, func(ctx context.Context, tx txConn) error {
		if err := s.writeTx(tx).InsertInstance(ctx, n, nil, nil); err != nil {
			return err
		}
		if locked, t.counted = s.locks.lock(n.ID, t.item.LockToken, at, until); !locked {
			return fmt.Errorf("instance %q is locked, or being moved or reset, before it was created", n.ID)
		}
		return nil
	}, func(err error) {
		if err != nil && locked {
			s.locks.undo(n.ID, t.item.LockToken, t.counted)
		}
	})
	if err == nil {
		err = s.readWork(ctx, []*taken{t}, n.Now)
		if err != nil {
			s.locks.abandon(n.ID, t.item.LockToken)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	t.item.Attempt = t.delivery(s.run)
	return t.item, nil
}

// CreateAndTurn creates the instance n and commits its first turn, the
// one next makes of the work item CreateLocked would return, in one
// write: the instance is locked for the turn's commit inside it, as
// CreateLocked locks it, and the commit leases up to max of the tasks the
// turn queued, as CommitTurnLeasing does. The start message the turn
// consumes is never written. When next declines, nothing is written.
func (s *Store) CreateAndTurn(ctx context.Context, n store.NewInstance, lease time.Duration,
	next func(*store.WorkItem) (*store.TurnCommit, int)) (bool, []*store.ActivityWork, error) {
	turn, max, consumed, err := sqlstore.FirstTurn(n, next)
	if turn == nil {
		return false, nil, err
	}
	payloads, err := encodeEvents(turn.NewEvents)
	if err != nil {
		return false, nil, fmt.Errorf("sqlite: create instance %q with its first turn: %w", n.ID, err)
	}
	var queued queuedTasks
	locked, counted := false, false
	err = s.writeThen(ctx, func(ctx context.Context, tx txConn) error {
		queued = queuedTasks{fetched: s.leases.fetched.Load()}
		wt := s.writeTx(tx)
		if err := wt.InsertFirst(ctx, n, !consumed); err != nil {
			return err
		}
		if locked, counted = s.locks.lock(n.ID, turn.LockToken, sqlstore.Nanos(turn.Now), sqlstore.Nanos(turn.Now.Add(lease))); !locked {
			return fmt.Errorf("instance %q is locked, or being moved or reset, before it was created", n.ID)
		}
		return sqlstore.CommitTurn(ctx, commitTx{wt, turn.LockToken, turn.NewEvents, payloads, &queued}, *turn)
	}, func(err error) {
		s.locks.written(n.ID, turn.LockToken, err == nil)
		if err != nil && locked {
			s.locks.undo(n.ID, turn.LockToken, counted)
		}
	})
	if err != nil {
		return false, nil, fmt.Errorf("sqlite: create instance %q with its first turn: %w", n.ID, err)
	}
	return true, s.leaseQueued(*turn, &queued, lease, max), nil
}

// delivery is the count of the locked instance's delivery: its row's,
// and one more when no commit of this run counted it in advance (a
// commit of the last run, or a second delivery since the commit).
func (t *taken) delivery(run int64) int {
	if !t.counted || t.run != run {
		return int(t.attempt) + 1
	}
	return int(t.attempt)
}

// CommitTurnLeasing commits a turn, as CommitTurn does, then leases to
// this host, until c.Now+lease, up to max of the tasks it queued on the
// host's own queue, in c.Activities' order, and returns them (leaseQueued).
func (s *Store) CommitTurnLeasing(ctx context.Context, c store.TurnCommit, lease time.Duration, max int) ([]*store.ActivityWork, error) {
	var queued queuedTasks
	if err := s.commitTurn(ctx, c, &queued); err != nil {
		return nil, err
	}
	return s.leaseQueued(c, &queued, lease, max), nil
}

// leaseQueued leases up to max of the tasks queued, which c's commit
// queued. Their work is made of the commit itself (the ids its inserts
// were given), so the lease reads nothing, and it cannot tell a task
// still queued from one a fetch took, ran and had its result committed
// meanwhile, which it would deliver again: when a fetch that leased a
// task of c's instance has ended since the commit was written, it leases
// none, and leaves them to the fetches.
func (s *Store) leaseQueued(c store.TurnCommit, queued *queuedTasks, lease time.Duration, max int) []*store.ActivityWork {
	schedules, _ := sqlstore.ToLease(c, max)
	if len(schedules) == 0 {
		return nil
	}
	place := make(map[int64]int, len(c.Activities)) // by schedule id
	for i, a := range c.Activities {
		place[a.ScheduleID] = i
	}
	s.leases.fetching.Lock()
	defer s.leases.fetching.Unlock()
	if s.leases.fetchedSince(queued.fetched, c.InstanceID) {
		return nil
	}
	at := sqlstore.Nanos(c.Now)
	leased := make([]*store.ActivityWork, 0, len(schedules))
	for _, schedule := range schedules {
		i := place[schedule]
		w := &store.ActivityWork{ID: queued.ids[i], InstanceID: c.InstanceID, ExecutionID: c.ExecutionID, ModuleHash: queued.module,
			Task: c.Activities[i], Attempt: 1, LockToken: sqlstore.NewToken()}
		// The commit counted the delivery in advance, in this run: a
		// lease that finds it counted already (a fetch took the task
		// and let it go) leaves it to the fetches, which count it.
		if ok, counted := s.leases.take(w.ID, queued.ranks[i], w.LockToken, at, sqlstore.Nanos(c.Now.Add(store.LeaseFor(w, lease))), nil); ok && !counted {
			s.leases.undo(w.ID, w.LockToken, counted)
		} else if ok {
			leased = append(leased, w)
		}
	}
	return leased
}

// CompleteAndTurn records the outcome of w, as CompleteActivity does and,
// when nobody holds its instance and it runs w's execution, locks it,
// makes its next turn (next) and commits it, as CommitTurnLeasing does.
// It takes the instance only when its delivery was counted in advance by
// a commit of this run, so that letting it go again leaves the count as
// it was; otherwise, as when next declines, the result waits for a turn
// of its own. When the turn's commit fails, the error wraps
// store.ErrTurnNotCommitted, and the instance stays locked by the turn's
// work item for the caller to let go: the delivery that failed counts.
func (s *Store) CompleteAndTurn(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time, lease time.Duration,
	next func(*store.WorkItem) (*store.TurnCommit, int)) (turned bool, leased []*store.ActivityWork, err error) {
	if err := s.CompleteActivity(ctx, w, result, now); err != nil {
		return false, nil, err
	}
	t := s.holdFor(ctx, w, now, lease)
	if t == nil {
		return false, nil, nil
	}
	c, max := next(t.item)
	if c == nil {
		s.locks.undo(w.InstanceID, t.item.LockToken, true)
		return false, nil, nil
	}
	ws, err := s.CommitTurnLeasing(ctx, *c, lease, max)
	if err != nil {
		return false, nil, fmt.Errorf("%w: %w", store.ErrTurnNotCommitted, err)
	}
	return true, ws, nil
}

// holdFor locks the instance of w for a turn of its outcome, until
// now+lease, and reads its work, when nobody holds it, it runs w's
// execution, and its delivery needs no write to count (taken.delivery);
// otherwise it returns nil, and leaves the instance as it was.
func (s *Store) holdFor(ctx context.Context, w *store.ActivityWork, now time.Time, lease time.Duration) *taken {
	if s.writable(ctx) != nil {
		return nil
	}
	t := &taken{item: &store.WorkItem{LockToken: sqlstore.NewToken()}}
	t.item.Instance.ID = w.InstanceID
	ok, counted := s.locks.lock(w.InstanceID, t.item.LockToken, sqlstore.Nanos(now), sqlstore.Nanos(now.Add(lease)))
	if !ok {
		return nil
	}
	t.counted = counted
	if !counted || s.readWork(ctx, []*taken{t}, now) != nil || t.gone || t.run != s.run || len(t.stale) > 0 ||
		t.item.Instance.Status.IsTerminal() || t.item.Instance.ExecutionID != w.ExecutionID || len(t.item.Messages) == 0 {
		s.locks.undo(w.InstanceID, t.item.LockToken, counted)
		return nil
	}
	t.item.Attempt = int(t.attempt) // counted in advance, by this run
	return t
}
