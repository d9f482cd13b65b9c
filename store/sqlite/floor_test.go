package sqlite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// queueTasks creates the instance id, running a module h1 deploys, and
// commits its first turn, which queues n Echo tasks; it returns their ids,
// in the fair order.
func queueTasks(t testing.TB, s *Store, id string, n int) []int64 {
	t.Helper()
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	item, err := s.CreateLocked(ctx, store.NewInstance{ID: id, Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"w"`), Now: t0}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Consumed: []int64{item.Messages[0].ID}}
	for i := range n {
		ev := event(int64(i+2), engine.ActivityScheduled)
		ev.Name = "Echo"
		c.NewEvents = append(c.NewEvents, ev)
		c.Activities = append(c.Activities, engine.ActivityTask{ScheduleID: ev.ID, Name: "Echo", Input: json.RawMessage(fmt.Sprint(i))})
	}
	if err := s.CommitTurn(ctx, c); err != nil {
		t.Fatal(err)
	}
	rows, err := s.readers.QueryContext(ctx, `SELECT id FROM activity_tasks WHERE instance_id = ? ORDER BY fair_rank, id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var task int64
		if err := rows.Scan(&task); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task)
	}
	return ids
}

// fetch leases up to max tasks at now, for a minute, and returns them.
func fetch(t *testing.T, s *Store, now time.Time, max int) []*store.ActivityWork {
	t.Helper()
	ws, err := s.LockNextActivities(ctx, now, time.Minute, max, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// wantTasks fails t unless ws are the tasks want, in order.
func wantTasks(t *testing.T, what string, ws []*store.ActivityWork, want ...int64) {
	t.Helper()
	var got []int64
	for _, w := range ws {
		got = append(got, w.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: fetched tasks %v; want %v", what, got, want)
	}
}

// TestAFetchPassesOverNoHeldTaskOfAFanOut: with 900 of one instance's
// 1,000 tasks leased one fetch after another, as a fan-out's are, the
// next fetch reads from past them, and names none of them as held to pass
// over (it named all 900 before the floors). Counted, not timed.
func TestAFetchPassesOverNoHeldTaskOfAFanOut(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ids := queueTasks(t, s, "i1", 1000)
	for i := 0; i < 900; i += 30 {
		wantTasks(t, "a fetch of 30", fetch(t, s, t0, 30), ids[i:i+30]...)
	}
	v := s.leases.view("", sqlstore.Nanos(t0))
	if len(v.held) != 0 || v.floor.id != ids[899]+1 {
		t.Fatalf("the next fetch passes over %d held tasks, reading from task %d; want none, from past task %d", len(v.held), v.floor.id, ids[899])
	}
	wantTasks(t, "the next fetch", fetch(t, s, t0, 1), ids[900])
}

// TestTasksBelowAFloorAreFetchedAgain: each way a task below a fetch's
// floor can be taken again (a lease that expires, leases let go, a retry's
// wait, a task queued with a rank below it) has the next fetch find it,
// in the fair order.
func TestTasksBelowAFloorAreFetchedAgain(t *testing.T) {
	t.Parallel()
	t.Run("an expired lease", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t)
		ids := queueTasks(t, s, "i1", 5)
		wantTasks(t, "the first fetch", fetch(t, s, t0, 3), ids[:3]...)
		wantTasks(t, "a fetch once their leases expired", fetch(t, s, t0.Add(2*time.Minute), 1), ids[0])
	})
	t.Run("leases let go", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t)
		ids := queueTasks(t, s, "i1", 5)
		wantTasks(t, "the first fetch", fetch(t, s, t0, 3), ids[:3]...)
		if err := s.ReleaseAllLeases(ctx); err != nil {
			t.Fatal(err)
		}
		wantTasks(t, "a fetch once they were let go", fetch(t, s, t0, 1), ids[0])
	})
	t.Run("a retry", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t)
		ids := queueTasks(t, s, "i1", 5)
		first := fetch(t, s, t0, 1)
		wantTasks(t, "the first fetch", first, ids[0])
		if err := s.RetryActivity(ctx, first[0], &engine.Failure{Message: "again"}, t0.Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		// The task that waits is passed over, not past the floor.
		wantTasks(t, "a fetch while it waits", fetch(t, s, t0, 2), ids[1:3]...)
		wantTasks(t, "a fetch once it waited", fetch(t, s, t0.Add(11*time.Second), 1), ids[0])
	})
	t.Run("a retry written before the store opened", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "test.db")
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ids := queueTasks(t, s, "i1", 5)
		first := fetch(t, s, t0, 1)
		if err := s.RetryActivity(ctx, first[0], &engine.Failure{Message: "again"}, t0.Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openAt(t, path, Options{})
		wantTasks(t, "a fetch while it waits", fetch(t, s, t0, 2), ids[1:3]...)
		wantTasks(t, "a fetch once it waited", fetch(t, s, t0.Add(11*time.Second), 1), ids[0])
	})
	t.Run("a task queued below the floor", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t)
		ids := queueTasks(t, s, "i1", 3)
		wantTasks(t, "the first fetch", fetch(t, s, t0, 3), ids...)
		// The queue has no task waiting: i2's takes the first rank,
		// before the floor past i1's.
		other := queueTasks(t, s, "i2", 1)
		wantTasks(t, "a fetch after i2 queued its task", fetch(t, s, t0, 1), other...)
	})
}
