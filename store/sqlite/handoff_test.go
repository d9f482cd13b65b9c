package sqlite

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestLeasingACommitsTasksReadsNothing: the tasks CommitTurnLeasing hands
// over are what a fetch of the same tasks would have handed (every field
// but the lock token), and leasing them costs the store nothing beyond
// the commit: as many SQLite steps as CommitTurn of the same turn.
func TestLeasingACommitsTasksReadsNothing(t *testing.T) {
	t.Parallel()
	countSteps.Store(true)
	dir := t.TempDir()
	tasks := []engine.ActivityTask{
		{ScheduleID: 2, Name: "Charge", Input: json.RawMessage(`{"cents":300}`), Timeout: 90 * time.Second,
			HeartbeatTimeout: 5 * time.Second, Retry: &engine.RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 1000}},
		{ScheduleID: 3, Name: "Ship", Queue: "outside"},
		{ScheduleID: 4, Name: "Notify"},
	}
	// run commits the turn that schedules tasks in a fresh store, with
	// leasing (or with CommitTurn, then a fetch), and returns the tasks
	// the host got and the steps the commit cost.
	run := func(name string, leasing bool) ([]*store.ActivityWork, int64) {
		path := filepath.Join(dir, name+".db")
		s := openAt(t, path, Options{Durability: DurabilityNormal})
		if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: t0}); err != nil {
			t.Fatal(err)
		}
		item, err := s.CreateLocked(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"world"`), Now: t0}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		events := []engine.Event{event(1, engine.OrchestrationStarted)}
		for _, a := range tasks {
			ev := event(a.ScheduleID, engine.ActivityScheduled)
			ev.Name, ev.Input = a.Name, a.Input
			events = append(events, ev)
		}
		c := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, NewEvents: events,
			Activities: tasks, Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}}
		before := stepsOf(path)
		if !leasing {
			commit(t, s, c)
			steps := stepsOf(path) - before
			ws, err := s.LockNextActivities(ctx, t0, time.Minute, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			return ws, steps
		}
		ws, err := s.CommitTurnLeasing(ctx, c, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		return ws, stepsOf(path) - before
	}
	leased, leasing := run("leasing", true)
	fetched, committing := run("fetching", false)
	for _, ws := range [][]*store.ActivityWork{leased, fetched} {
		for _, w := range ws {
			if w.LockToken == "" {
				t.Fatalf("task %d was handed with no lock token", w.ID)
			}
			w.LockToken = ""
		}
	}
	if !reflect.DeepEqual(leased, fetched) {
		t.Errorf("CommitTurnLeasing handed\n%s\na fetch of the same tasks hands\n%s", works2json(t, leased), works2json(t, fetched))
	}
	if len(leased) != 2 {
		t.Errorf("CommitTurnLeasing handed %d tasks; want Charge and Notify, the two on the host's own queue", len(leased))
	}
	t.Logf("the commit: %d SQLite steps with its lease, %d without", leasing, committing)
	if leasing != committing {
		t.Errorf("the commit cost %d SQLite steps with its lease and %d without: the lease read the store", leasing, committing)
	}
}

// works2json shows ws as JSON, for a failure's message.
func works2json(t *testing.T, ws []*store.ActivityWork) string {
	t.Helper()
	b, err := json.MarshalIndent(ws, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestACommitsLeaseLeavesWhatAFetchTookMeanwhile: a task a fetch took
// between a turn's commit and that commit's lease of its own tasks, ran,
// and whose result the next turn committed, is not leased again by the
// first commit's lease, which reads nothing and cannot tell it from one
// still queued: it ran a second time, as its first delivery again, in
// a crash test under load.
func TestACommitsLeaseLeavesWhatAFetchTookMeanwhile(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	item, err := s.CreateLocked(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"w"`), Now: t0}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Consumed: []int64{item.Messages[0].ID}}
	for i := range 2 {
		ev := event(int64(i+2), engine.ActivityScheduled)
		ev.Name = "Echo"
		c.NewEvents = append(c.NewEvents, ev)
		c.Activities = append(c.Activities, engine.ActivityTask{ScheduleID: ev.ID, Name: "Echo"})
	}
	var queued queuedTasks
	if err := s.commitTurn(ctx, c, &queued); err != nil {
		t.Fatal(err)
	}
	// Meanwhile a fetch takes the first task, which runs, and the next
	// turn commits its result.
	taken := fetch(t, s, t0, 1)
	wantTasks(t, "the fetch", taken, queued.ids[0])
	done := event(0, engine.ActivityCompleted)
	done.ScheduleID = 2
	if err := s.CompleteActivity(ctx, taken[0], done, t0); err != nil {
		t.Fatal(err)
	}
	items, err := s.LockNextInstances(ctx, t0, time.Hour, 1, nil)
	if err != nil || len(items) != 1 {
		t.Fatalf("the turn of the result: %d items, %v", len(items), err)
	}
	next := items[0]
	completed := event(4, engine.ActivityCompleted)
	completed.ScheduleID = 2
	var consumed []int64
	for _, m := range next.Messages {
		consumed = append(consumed, m.ID)
	}
	if err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: next.LockToken, Now: t0, Status: engine.StatusRunning,
		NewEvents: []engine.Event{completed}, Consumed: consumed}); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.leaseQueued(c, &queued, time.Minute, 2) {
		if w.ID == queued.ids[0] {
			t.Fatalf("the first commit's lease took task %d, which ran and whose result is committed", w.ID)
		}
	}
}

// TestFetchesThatVoidACommitsLease: only a fetch that leased a task of the
// commit's instance voids its lease, and once more fetches have ended than
// the store keeps, any does (it can no longer tell).
func TestFetchesThatVoidACommitsLease(t *testing.T) {
	t.Parallel()
	as := newActivityLeases()
	of := func(instance string) []*store.ActivityWork {
		return []*store.ActivityWork{{InstanceID: "other"}, {InstanceID: instance}}
	}
	since := as.fetched.Load()
	as.fetchedTasks(nil) // a fetch that took nothing
	as.fetchedTasks(of("other"))
	if as.fetchedSince(since, "i1") {
		t.Fatal("fetches of other instances' tasks voided i1's lease")
	}
	as.fetchedTasks(of("i1"))
	if !as.fetchedSince(since, "i1") {
		t.Fatal("a fetch of a task of i1 did not void i1's lease")
	}
	since = as.fetched.Load()
	for range recentFetches {
		as.fetchedTasks(of("other"))
	}
	if as.fetchedSince(since, "i1") {
		t.Fatalf("%d fetches of other instances' tasks voided i1's lease", recentFetches)
	}
	as.fetchedTasks(of("other"))
	if !as.fetchedSince(since, "i1") {
		t.Fatalf("%d fetches, more than the store keeps, did not void i1's lease", recentFetches+1)
	}
}
