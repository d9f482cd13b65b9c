package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
)

// openTest opens a fresh store and checks the file's integrity when the
// test ends.
func openTest(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var res string
		if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
			t.Errorf("integrity check: %q, %v", res, err)
		}
		s.Close()
	})
	return s, path
}

// withInstance deploys a module and creates instance "i1" of "Greeting".
func withInstance(t *testing.T, s *Store) {
	t.Helper()
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateInstance(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"world"`), Now: t0}); err != nil {
		t.Fatal(err)
	}
}

func event(id int64, kind engine.EventKind) engine.Event {
	return engine.Event{ID: id, Kind: kind, Time: t0.Add(time.Duration(id) * time.Second)}
}

func TestModules(t *testing.T) {
	s, _ := openTest(t)
	for _, m := range []store.Module{
		{Hash: "h1", Wasm: []byte("one"), Orchestrations: []string{"A", "B"}, Activities: []string{"X"}, DeployedAt: t0},
		{Hash: "h2", Wasm: []byte("two"), Orchestrations: []string{"A"}, DeployedAt: t0.Add(time.Minute)},
	} {
		if err := s.PutModule(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name, want string) {
		t.Helper()
		got, err := s.ModuleFor(ctx, name)
		if err != nil || got != want {
			t.Fatalf("ModuleFor(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	check("A", "h2")
	check("B", "h1")
	// Deploying h1 again makes it the newest.
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("one"), Orchestrations: []string{"A", "B"}, DeployedAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	check("A", "h1")
	if _, err := s.ModuleFor(ctx, "C"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ModuleFor(C) err = %v", err)
	}
	m, err := s.GetModule(ctx, "h1")
	if err != nil || string(m.Wasm) != "one" || !reflect.DeepEqual(m.Activities, []string{"X"}) {
		t.Fatalf("GetModule = %+v, %v", m, err)
	}
	list, err := s.ListModules(ctx)
	if err != nil || len(list) != 2 || list[0].Hash != "h1" || list[1].Hash != "h2" {
		t.Fatalf("ListModules = %+v, %v", list, err)
	}
	if _, err := s.GetModule(ctx, "nope"); err == nil || err.Error() != "sqlite: module nope not found" {
		t.Fatalf("GetModule(nope) err = %v", err)
	}
}

func TestCreateInstance(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	err := s.CreateInstance(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Now: t0})
	if !errors.Is(err, store.ErrInstanceExists) {
		t.Fatalf("second create err = %v", err)
	}
	inst, err := s.GetInstance(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	if inst.Status != engine.StatusPending || inst.ExecutionID != 1 || string(inst.Input) != `"world"` || !inst.CreatedAt.Equal(t0) || inst.ModuleHash != "h1" {
		t.Fatalf("instance %+v", inst)
	}
	item, err := s.LockNextInstance(ctx, t0, time.Minute)
	if err != nil || item == nil {
		t.Fatalf("lock: %+v, %v", item, err)
	}
	want := engine.Event{Kind: engine.OrchestrationStarted, Name: "Greeting", InstanceID: "i1", Input: json.RawMessage(`"world"`)}
	if len(item.Messages) != 1 || !reflect.DeepEqual(item.Messages[0].Event, want) || len(item.History) != 0 {
		t.Fatalf("work item %+v", item)
	}
	if _, err := s.GetInstance(ctx, "nope"); err == nil || err.Error() != `sqlite: instance "nope" not found` {
		t.Fatalf("GetInstance(nope) err = %v", err)
	}
	if _, err := s.History(ctx, "nope", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("History(nope) err = %v", err)
	}
}

func TestTurnCommit(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	item, _ := s.LockNextInstance(ctx, t0, time.Minute)
	if again, err := s.LockNextInstance(ctx, t0, time.Minute); again != nil || err != nil {
		t.Fatalf("a locked instance was handed out again: %+v, %v", again, err)
	}
	fireAt := t0.Add(time.Hour)
	started := event(1, engine.OrchestrationStarted)
	scheduled := event(2, engine.ActivityScheduled)
	scheduled.Name, scheduled.Input = "SayHello", json.RawMessage(`"world"`)
	timer := event(3, engine.TimerCreated)
	timer.FireAt = &fireAt
	err := s.CommitTurn(ctx, store.TurnCommit{
		InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken,
		NewEvents:  []engine.Event{started, scheduled, timer},
		Activities: []engine.ActivityTask{{ScheduleID: 2, Name: "SayHello", Input: json.RawMessage(`"world"`)}},
		Timers:     []engine.TimerTask{{ScheduleID: 3, FireAt: fireAt}},
		Status:     engine.StatusRunning, Consumed: []int64{item.Messages[0].ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	history, err := s.History(ctx, "i1", 0)
	if err != nil || len(history) != 3 || history[1].Name != "SayHello" || !history[0].Time.Equal(started.Time) {
		t.Fatalf("history %+v, %v", history, err)
	}
	if inst, _ := s.GetInstance(ctx, "i1"); inst.Status != engine.StatusRunning {
		t.Fatalf("status %s", inst.Status)
	}
	// The start message is consumed and the timer is not due yet.
	if item, err := s.LockNextInstance(ctx, fireAt.Add(-time.Nanosecond), time.Minute); item != nil || err != nil {
		t.Fatalf("work before the timer is due: %+v, %v", item, err)
	}
	if next, ok, err := s.NextVisibleAt(ctx, t0); err != nil || !ok || !next.Equal(fireAt) {
		t.Fatalf("NextVisibleAt = %v %v %v, want %v", next, ok, err, fireAt)
	}
	item, err = s.LockNextInstance(ctx, fireAt, time.Minute)
	if err != nil || item == nil || len(item.History) != 3 || len(item.Messages) != 1 {
		t.Fatalf("work when the timer is due: %+v, %v", item, err)
	}
	if m := item.Messages[0].Event; m.Kind != engine.TimerFired || m.ScheduleID != 3 || !m.FireAt.Equal(fireAt) {
		t.Fatalf("timer message %+v", m)
	}
	w, err := s.LockNextActivity(ctx, t0, time.Minute)
	if err != nil || w == nil || w.Task.Name != "SayHello" || w.Task.ScheduleID != 2 || w.ModuleHash != "h1" || w.Attempt != 1 || string(w.Task.Input) != `"world"` {
		t.Fatalf("activity %+v, %v", w, err)
	}
}

func TestCommitIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name   string
		commit func(token string) store.TurnCommit
		want   string
	}{
		{"wrong lock token", func(string) store.TurnCommit {
			return store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: "stolen", NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Status: engine.StatusRunning}
		}, `sqlite: commit turn of "i1": lease lost: another worker holds the instance`},
		{"gap in event ids", func(token string) store.TurnCommit {
			return store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: token,
				NewEvents:  []engine.Event{event(1, engine.OrchestrationStarted), event(3, engine.ActivityScheduled)},
				Activities: []engine.ActivityTask{{ScheduleID: 3, Name: "X"}}, Status: engine.StatusRunning, Consumed: []int64{1}}
		}, `sqlite: commit turn of "i1": new event 1 has id 3 where history continues at 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			withInstance(t, s)
			item, _ := s.LockNextInstance(ctx, t0, time.Minute)
			err := s.CommitTurn(ctx, tt.commit(item.LockToken))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			if h, _ := s.History(ctx, "i1", 0); len(h) != 0 {
				t.Errorf("history written: %+v", h)
			}
			if w, _ := s.LockNextActivity(ctx, t0, time.Minute); w != nil {
				t.Errorf("activity task written: %+v", w)
			}
			if inst, _ := s.GetInstance(ctx, "i1"); inst.Status != engine.StatusPending {
				t.Errorf("status changed to %s", inst.Status)
			}
			// The lock is still held and the message still there: after
			// the lease, the same work is handed out again.
			again, err := s.LockNextInstance(ctx, t0.Add(2*time.Minute), time.Minute)
			if err != nil || again == nil || len(again.Messages) != 1 || again.Messages[0].ID != item.Messages[0].ID {
				t.Fatalf("work after expiry: %+v, %v", again, err)
			}
		})
	}
}

func TestInstanceLeaseExpiry(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	first, _ := s.LockNextInstance(ctx, t0, time.Minute)
	if item, _ := s.LockNextInstance(ctx, t0.Add(59*time.Second), time.Minute); item != nil {
		t.Fatal("handed out before the lease expired")
	}
	second, err := s.LockNextInstance(ctx, t0.Add(61*time.Second), time.Minute)
	if err != nil || second == nil || second.LockToken == first.LockToken {
		t.Fatalf("after expiry: %+v, %v", second, err)
	}
	err = s.CommitTurn(ctx, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: first.LockToken, Status: engine.StatusRunning})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("commit with the expired lock: %v", err)
	}
	if err := s.AbandonInstance(ctx, "i1", second.LockToken); err != nil {
		t.Fatal(err)
	}
	if item, _ := s.LockNextInstance(ctx, t0.Add(62*time.Second), time.Minute); item == nil {
		t.Fatal("abandoned instance not handed out again")
	}
}

func TestActivityLeases(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	item, _ := s.LockNextInstance(ctx, t0, time.Minute)
	sched := event(2, engine.ActivityScheduled)
	sched.Name = "A"
	if err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken,
		NewEvents:  []engine.Event{event(1, engine.OrchestrationStarted), sched},
		Activities: []engine.ActivityTask{{ScheduleID: 2, Name: "A"}}, Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}}); err != nil {
		t.Fatal(err)
	}
	first, _ := s.LockNextActivity(ctx, t0, time.Minute)
	if w, _ := s.LockNextActivity(ctx, t0.Add(time.Second), time.Minute); w != nil {
		t.Fatal("leased task handed out twice")
	}
	second, _ := s.LockNextActivity(ctx, t0.Add(2*time.Minute), time.Minute)
	if second == nil || second.Attempt != 2 || second.ID != first.ID {
		t.Fatalf("redelivery after expiry: %+v", second)
	}
	done := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2, Result: json.RawMessage(`"ok"`)}
	if err := s.CompleteActivity(ctx, first, done); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("completion with the expired lease: %v", err)
	}
	if err := s.CompleteActivity(ctx, second, done); err != nil {
		t.Fatal(err)
	}
	next, _ := s.LockNextInstance(ctx, t0.Add(3*time.Minute), time.Minute)
	if next == nil || len(next.Messages) != 1 || !reflect.DeepEqual(next.Messages[0].Event, done) {
		t.Fatalf("completion message: %+v", next)
	}
	if err := s.ReleaseAllLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.LockNextInstance(ctx, t0.Add(3*time.Minute), time.Minute); again == nil {
		t.Fatal("ReleaseAllLeases kept the instance locked")
	}
}

func TestMessagesForFinishedInstancesAreDropped(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	item, _ := s.LockNextInstance(ctx, t0, time.Minute)
	if err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.OrchestrationCompleted)},
		Status:    engine.StatusCompleted, Result: json.RawMessage(`"done"`), Consumed: []int64{item.Messages[0].ID}}); err != nil {
		t.Fatal(err)
	}
	w := &store.ActivityWork{InstanceID: "i1"}
	if _, err := s.db.Exec(`INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, lock_token) VALUES ('i1', 1, 'h1', 9, 'A', 'tok')`); err != nil {
		t.Fatal(err)
	}
	s.db.QueryRow(`SELECT id FROM activity_tasks`).Scan(&w.ID)
	w.LockToken = "tok"
	if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 9}); err != nil {
		t.Fatal(err)
	}
	if item, err := s.LockNextInstance(ctx, t0, time.Minute); item != nil || err != nil {
		t.Fatalf("finished instance handed out: %+v, %v", item, err)
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM messages`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d messages left for a finished instance", n)
	}
	inst, _ := s.GetInstance(ctx, "i1")
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"done"` {
		t.Fatalf("instance %+v", inst)
	}
}

func TestOneHostPerFile(t *testing.T) {
	_, path := openTest(t)
	_, err := Open(path, Options{})
	want := fmt.Sprintf("sqlite: %s is in use by another durabox process (pid %d); stop it first or use another --db file", path, os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("second open: %v\nwant %s", err, want)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, Options{Durability: DurabilityNormal})
	if err != nil {
		t.Fatal(err)
	}
	withInstance(t, s)
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if inst, err := s.GetInstance(ctx, "i1"); err != nil || inst.Name != "Greeting" {
		t.Fatalf("after reopen: %+v, %v", inst, err)
	}
}

func TestRefusesFilesItDoesNotOwn(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"not sqlite", func(t *testing.T, path string) {
			os.WriteFile(path, bytes.Repeat([]byte("not a database "), 100), 0o644)
		}, "is not a SQLite database (its header is wrong); refusing to open it, and it was left as it was"},
		{"someone else's sqlite", func(t *testing.T, path string) {
			db, _ := sql.Open("sqlite3", path)
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (1)`); err != nil {
				t.Fatal(err)
			}
		}, "is a SQLite database but not a Durabox one; refusing to open it, and it was left as it was"},
		{"newer durabox", func(t *testing.T, path string) {
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.db.Exec(`PRAGMA user_version = 7`)
			s.Close()
		}, fmt.Sprintf("has schema version 7, newer than this durabox understands (%d); upgrade durabox to open it", schemaVersion)},
		{"bad durability", func(*testing.T, string) {}, `sqlite: durability "fast" is not one of full, normal`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			tt.make(t, path)
			before, _ := os.ReadFile(path)
			opts := Options{}
			if tt.name == "bad durability" {
				opts.Durability = "fast"
			}
			_, err := Open(path, opts)
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to end with %q", err, tt.want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatal("the refused file was modified")
			}
		})
	}
}

func TestMigratesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withInstance(t, s)
	// Make it a version-1 database: modules had no env column then, and
	// instances no parent and no custom status.
	if _, err := s.db.Exec(`ALTER TABLE modules DROP COLUMN env; ALTER TABLE instances DROP COLUMN parent_id;
		ALTER TABLE instances DROP COLUMN parent_schedule_id; ALTER TABLE instances DROP COLUMN custom_status;
		PRAGMA user_version = 1;`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version int
	s.db.QueryRow(`PRAGMA user_version`).Scan(&version)
	if version != schemaVersion {
		t.Fatalf("version %d after opening, want %d", version, schemaVersion)
	}
	m, err := s.GetModule(ctx, "h1")
	if err != nil || string(m.Wasm) != "w1" || len(m.Env) != 0 {
		t.Fatalf("module after migration: %+v, %v", m, err)
	}
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, Env: []string{"A=1"}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.GetModule(ctx, "h1"); !reflect.DeepEqual(m.Env, []string{"A=1"}) {
		t.Fatalf("env after redeploy: %q", m.Env)
	}
	if inst, err := s.GetInstance(ctx, "i1"); err != nil || inst.Name != "Greeting" {
		t.Fatalf("instance after migration: %+v, %v", inst, err)
	}
}

func TestEnqueue(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	ev := engine.Event{Kind: engine.ExternalEvent, Name: "Approve", Result: json.RawMessage(`true`)}
	if err := s.Enqueue(ctx, "i1", ev); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(ctx, "nope", ev); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("enqueue for a missing instance: %v", err)
	}
	item, _ := s.LockNextInstance(ctx, t0, time.Minute)
	if item == nil || len(item.Messages) != 2 || !reflect.DeepEqual(item.Messages[1].Event, ev) {
		t.Fatalf("messages %+v", item)
	}
}

func TestContinueAsNew(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	item, _ := s.LockNextInstance(ctx, t0, time.Minute)
	carried := engine.Event{Kind: engine.ExternalEventPersistent, Name: "X", Result: json.RawMessage(`"kept"`)}
	err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.OrchestrationContinuedAsNew)},
		Status:    engine.StatusContinuedAsNew, Consumed: []int64{item.Messages[0].ID},
		ContinueAsNew: &engine.ContinueAsNew{Input: json.RawMessage(`2`), Carried: []engine.Event{carried}},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := s.GetInstance(ctx, "i1")
	if inst.ExecutionID != 2 || inst.Status != engine.StatusPending || string(inst.Input) != `2` {
		t.Fatalf("instance %+v", inst)
	}
	if h, _ := s.History(ctx, "i1", 0); len(h) != 0 {
		t.Fatalf("the new execution has history %+v", h)
	}
	if h, _ := s.History(ctx, "i1", 1); len(h) != 2 || h[1].Kind != engine.OrchestrationContinuedAsNew {
		t.Fatalf("the first execution's history %+v", h)
	}
	next, _ := s.LockNextInstance(ctx, t0, time.Minute)
	want := []engine.Event{{Kind: engine.OrchestrationStarted, Name: "Greeting", InstanceID: "i1", Input: json.RawMessage(`2`)}, carried}
	if next == nil || len(next.History) != 0 || len(next.Messages) != 2 || !reflect.DeepEqual([]engine.Event{next.Messages[0].Event, next.Messages[1].Event}, want) {
		t.Fatalf("next execution's work %+v", next)
	}
}

func TestChildren(t *testing.T) {
	s, _ := openTest(t)
	withInstance(t, s)
	item, _ := s.LockNextInstance(ctx, t0, time.Minute)
	err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.SubOrchestrationScheduled), event(3, engine.SubOrchestrationScheduled), event(4, engine.OrchestrationChained)},
		Status:    engine.StatusRunning, Consumed: []int64{item.Messages[0].ID},
		Children: []store.NewChild{
			{ID: "i1:2", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"kid"`), ScheduleID: 2},
			{ID: "i1:3", Name: "Nope", ScheduleID: 3},
			{ID: "i1:4", Name: "Greeting", ModuleHash: "h1", ScheduleID: 4, Detached: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	work := map[string]*store.WorkItem{}
	for {
		item, err := s.LockNextInstance(ctx, t0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			break
		}
		work[item.Instance.ID] = item
	}
	if len(work) != 3 || work["i1:2"] == nil || work["i1:4"] == nil {
		t.Fatalf("work for %v, want i1, i1:2 and i1:4", slices.Collect(maps.Keys(work)))
	}
	// The child with no module fails at once, reported to the parent.
	parent := work["i1"]
	if len(parent.Messages) != 1 || parent.Messages[0].Event.Kind != engine.SubOrchestrationFailed ||
		parent.Messages[0].Event.Failure.Message != `child orchestration "Nope" could not start: no deployed module registers orchestration "Nope"` {
		t.Fatalf("parent's work %+v", parent)
	}
	// The attached child reports its result to the parent when it ends; the
	// detached one reports nothing.
	for _, id := range []string{"i1:2", "i1:4"} {
		kid := work[id]
		if string(kid.Messages[0].Event.Input) != map[string]string{"i1:2": `"kid"`, "i1:4": ``}[id] {
			t.Fatalf("child %s started with %+v", id, kid.Messages[0].Event)
		}
		if err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: kid.LockToken,
			NewEvents: []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.OrchestrationCompleted)},
			Status:    engine.StatusCompleted, Result: json.RawMessage(`"done"`), Consumed: []int64{kid.Messages[0].ID}}); err != nil {
			t.Fatal(err)
		}
	}
	s.AbandonInstance(ctx, "i1", parent.LockToken)
	parent, _ = s.LockNextInstance(ctx, t0, time.Minute)
	want := engine.Event{Kind: engine.SubOrchestrationCompleted, ScheduleID: 2, Result: json.RawMessage(`"done"`)}
	if parent == nil || len(parent.Messages) != 2 || !reflect.DeepEqual(parent.Messages[1].Event, want) {
		t.Fatalf("parent's work %+v", parent)
	}
}
