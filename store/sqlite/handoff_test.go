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
