package sqlite

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestLockingWritesNothing: an instance whose delivery its last commit (or
// its creation) counted in advance is locked, and let go by its commit,
// without a write of its own; an abandoned one costs one write when it is
// locked again, to count that delivery.
func TestLockingWritesNothing(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	writes := s.batches.Load()
	item := lock(t, s, t0)
	if n := s.batches.Load() - writes; n != 0 {
		t.Fatalf("locking a new instance took %d transactions; want none", n)
	}
	if err := s.AbandonInstance(ctx, "i1", item.LockToken); err != nil {
		t.Fatal(err)
	}
	if n := s.batches.Load() - writes; n != 0 {
		t.Fatalf("abandoning took %d transactions; want none", n)
	}
	item = lock(t, s, t0)
	if n := s.batches.Load() - writes; n != 1 || item.Attempt != 2 {
		t.Fatalf("locking an abandoned instance took %d transactions, Attempt %d; want 1, 2", n, item.Attempt)
	}
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)},
		Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
	if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "E"}, t0, nil); err != nil {
		t.Fatal(err)
	}
	writes = s.batches.Load()
	if item = lock(t, s, t0); item.Attempt != 1 || s.batches.Load() != writes {
		t.Fatalf("after a commit: Attempt %d, %d transactions; want 1, none", item.Attempt, s.batches.Load()-writes)
	}
}

// TestDeliveriesCountAcrossRuns: a store that ends (a crash, say) with an
// instance locked leaves no lock behind, and the next run counts the
// delivery it handed out; one that ends between a commit and the next lock
// counts the delivery the commit counted in advance, one early.
func TestDeliveriesCountAcrossRuns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runs.db")
	s := openAt(t, path, Options{})
	withInstance(t, s)
	create(t, s, "i2")
	first := lock(t, s, t0)
	s.Close()

	s = openAt(t, path, Options{})
	again := lock(t, s, t0)
	if again.Instance.ID != first.Instance.ID || again.Attempt != 2 {
		t.Fatalf("first lock of the next run: %s, Attempt %d; want %s, 2", again.Instance.ID, again.Attempt, first.Instance.ID)
	}
	other := lock(t, s, t0)
	if other.Attempt != 2 {
		t.Fatalf("%s, locked first in the second run, had Attempt %d; want 2 (counted in advance by the first run)", other.Instance.ID, other.Attempt)
	}
	commit(t, s, store.TurnCommit{InstanceID: other.Instance.ID, ExecutionID: 1, LockToken: other.LockToken, Now: t0,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Status: engine.StatusRunning, Consumed: []int64{other.Messages[0].ID}})
	if err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: first.Instance.ID, ExecutionID: 1, LockToken: first.LockToken, Now: t0,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Status: engine.StatusRunning}); err == nil {
		t.Fatal("a commit with the lock of the run before succeeded")
	}
}

// TestConcurrentTurnsConsumeOnce: workers lock, commit and lock again while
// messages keep coming; no message is handed out again once a commit has
// consumed it, however the reads that find work and the commits interleave.
func TestConcurrentTurnsConsumeOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	const instances, events = 8, 40
	for i := 1; i < instances; i++ {
		create(t, s, fmt.Sprint("i", i+1))
	}
	var mu sync.Mutex
	consumed := map[int64]string{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for e := range events {
			for i := range instances {
				if err := s.Enqueue(ctx, fmt.Sprint("i", i+1), engine.Event{Kind: engine.ExternalEvent, Name: fmt.Sprint(e)}, t0, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	done := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				items, err := s.LockNextInstances(ctx, t0, time.Hour, 2, nil)
				if err != nil {
					t.Error(err)
					return
				}
				for _, item := range items {
					id := item.Instance.ID
					c := store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning}
					mu.Lock()
					for _, m := range item.Messages {
						if by, ok := consumed[m.ID]; ok {
							t.Errorf("message %d of %s handed out again after %s consumed it", m.ID, id, by)
						}
						c.Consumed = append(c.Consumed, m.ID)
					}
					mu.Unlock()
					c.NewEvents = []engine.Event{event(item.HistoryLen+1, engine.OrchestrationStarted)}
					if err := s.CommitTurn(ctx, c); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, m := range item.Messages {
						consumed[m.ID] = item.LockToken
					}
					mu.Unlock()
				}
			}
		})
	}
	// Done when every message is consumed.
	for {
		mu.Lock()
		n := len(consumed)
		mu.Unlock()
		if n == instances*(events+1) || t.Failed() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(done)
	wg.Wait()
}

// TestMigratesVersion8 opens a version-8 database that a crashed host left
// with an instance locked for an hour: the lock goes with the columns, and
// the instance's next delivery counts the one the crash cut short.
func TestMigratesVersion8(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v8.db")
	s := openAt(t, path, Options{})
	withInstance(t, s)
	if _, err := s.db.Exec(toVersion8+`UPDATE instances SET lock_token = 'crashed', locked_until = ?, attempt = 1;`, t0.Add(time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path, Options{})
	if item := lock(t, s, t0); item.Attempt != 2 {
		t.Fatalf("the instance a crash left locked has Attempt %d; want 2", item.Attempt)
	}
}

// TestConcurrentActivitiesCompleteOnce: workers lease and complete tasks
// at once; a task completed is never leased again, however a read that
// finds tasks and a completion interleave.
func TestConcurrentActivitiesCompleteOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	const tasks = 400
	item := lock(t, s, t0)
	c := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning,
		Consumed: []int64{item.Messages[0].ID}, NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}}
	for i := range tasks {
		c.NewEvents = append(c.NewEvents, event(int64(i+2), engine.ActivityScheduled))
		c.Activities = append(c.Activities, engine.ActivityTask{ScheduleID: int64(i + 2), Name: "SayHello"})
	}
	commit(t, s, c)
	var mu sync.Mutex
	completed := map[int64]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				ws, err := s.LockNextActivities(ctx, t0, time.Hour, 1, nil)
				if err != nil || len(ws) == 0 {
					if err != nil {
						t.Error(err)
					}
					return
				}
				for _, w := range ws {
					mu.Lock()
					if completed[w.ID] {
						t.Errorf("task %d leased again after it was completed", w.ID)
					}
					mu.Unlock()
					if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID}, t0); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					completed[w.ID] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(completed) != tasks {
		t.Fatalf("%d tasks completed, want %d", len(completed), tasks)
	}
}
