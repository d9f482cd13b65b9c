package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// Activity results ride their instance's next turn. CompleteActivity keeps
// a result in memory, beside the task, which stays in the file, instead of
// removing the task and writing the result as a message; the result is
// handed to the instance as a message with the negative of the task's id,
// and the commit of the turn that consumes it removes the task. So an
// activity costs no write of its own: its removal is one statement of the
// turn that records its result, which had to be written anyway.
//
// What a crash loses is what an unsynced result lost before: the result,
// not the task, whose activity runs again (at-least-once), with its
// delivery counted. A result that arrives for an execution that has ended
// (continued as new, reset) or an instance that has finished or gone is
// dropped, with its task, when its instance is next taken, as the message
// of such a result was dropped.
//
// Results are kept in memory only up to pendingResultMax each and
// pendingMax in all; larger ones, and any past the bound, are written as
// messages at once, as they always were.

const (
	// pendingResultMax bounds the payload of a result kept in memory.
	pendingResultMax = 64 << 10
	// pendingMax bounds the payloads of all the results kept in memory.
	pendingMax = 64 << 20
)

// pendingResult is an activity result kept in memory.
type pendingResult struct {
	task      int64
	execution int64
	// at is when it came (Unix nanoseconds): its place among its
	// instance's messages, which come in the order they were stored.
	at    int64
	event engine.Event
	size  int
}

// results holds the activity results kept in memory, by instance.
type results struct {
	mu    sync.Mutex
	byID  map[string][]*pendingResult
	bytes int
}

func newResults() *results { return &results{byID: map[string][]*pendingResult{}} }

// add keeps r for instance id, unless it would pass the bounds; it reports
// whether it did.
func (rs *results) add(id string, r *pendingResult) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r.size > pendingResultMax || rs.bytes+r.size > pendingMax {
		return false
	}
	rs.byID[id] = append(rs.byID[id], r)
	rs.bytes += r.size
	return true
}

// of returns the results kept for the instance, oldest first.
func (rs *results) of(id string) []*pendingResult {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.byID[id])
}

// has reports whether results are kept for the instance.
func (rs *results) has(id string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.byID[id]) > 0
}

// remove forgets the results of the given tasks kept for the instance.
func (rs *results) remove(id string, tasks []int64) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	kept := rs.byID[id][:0]
	for _, r := range rs.byID[id] {
		if slices.Contains(tasks, r.task) {
			rs.bytes -= r.size
		} else {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(rs.byID, id)
	} else {
		rs.byID[id] = kept
	}
}

// waiting returns the instances with results kept, the oldest result
// first, and how many results there are.
func (rs *results) waiting() (ids []string, n int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	oldest := map[string]int64{}
	for id, r := range rs.byID {
		ids, oldest[id], n = append(ids, id), r[0].at, n+len(r)
	}
	slices.SortFunc(ids, func(a, b string) int { return int(min(max(oldest[a]-oldest[b], -1), 1)) })
	return ids, n
}

// oldest returns the oldest result kept, if any: its instance and when it
// came.
func (rs *results) oldest() (id string, at int64, ok bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i, r := range rs.byID {
		if !ok || r[0].at < at {
			id, at, ok = i, r[0].at, true
		}
	}
	return id, at, ok
}

// resultMessage is the message a kept result is handed out as: its id is
// the negative of its task's, which Consume recognizes.
func resultMessage(r *pendingResult) store.Message {
	return store.Message{ID: -r.task, Event: r.event}
}

// withResults adds to t's messages the results kept for its instance,
// each in its place by when it came (where its message would have been
// stored), and returns the tasks of the results
// kept for an execution that is not the instance's current one: nothing
// will take them.
func (s *Store) withResults(ctx context.Context, tx querier, t *taken, now time.Time) (stale []int64, err error) {
	kept := s.results.of(t.item.Instance.ID)
	if len(kept) == 0 {
		return nil, nil
	}
	var current []*pendingResult
	for _, r := range kept {
		if r.execution == t.item.Instance.ExecutionID && !t.item.Instance.Status.IsTerminal() {
			current = append(current, r)
		} else {
			stale = append(stale, r.task)
		}
	}
	if len(current) == 0 {
		return stale, nil
	}
	at := map[int64]int64{}
	if len(t.item.Messages) > 0 {
		// Messages come in the order they were stored (a timer when it
		// was set), as their ids run.
		rows, err := tx.QueryContext(ctx, `SELECT id, enqueued_at FROM messages WHERE instance_id = ? AND visible_at <= ?`,
			t.item.Instance.ID, sqlstore.Nanos(now))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var id, since int64
			if err := rows.Scan(&id, &since); err != nil {
				return nil, err
			}
			at[id] = since
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	for _, r := range current {
		at[-r.task] = r.at
		t.item.Messages = append(t.item.Messages, resultMessage(r))
	}
	slices.SortStableFunc(t.item.Messages, func(a, b store.Message) int {
		return int(min(max(at[a.ID]-at[b.ID], -1), 1))
	})
	return stale, nil
}

// dropResults removes the tasks of results nothing will take, in the write
// tx runs (whose commit must be followed by forgetResults).
func dropResults(ctx context.Context, tx txConn, tasks []int64) error {
	for _, task := range tasks {
		if _, err := tx.ExecContext(ctx, `DELETE FROM activity_tasks WHERE id = ?`, task); err != nil {
			return fmt.Errorf("drop the result of activity %d: %w", task, err)
		}
	}
	return nil
}

// forgetResults forgets the results of tasks kept for the instance, and
// the tasks' leases, once their removal is committed.
func (s *Store) forgetResults(id string, tasks []int64) {
	if len(tasks) == 0 {
		return
	}
	s.results.remove(id, tasks)
	for _, task := range tasks {
		s.leases.forget(task)
	}
}

// resultTasks returns the tasks whose results the consumed messages are.
func resultTasks(consumed []int64) []int64 {
	var tasks []int64
	for _, m := range consumed {
		if m < 0 {
			tasks = append(tasks, -m)
		}
	}
	return tasks
}
