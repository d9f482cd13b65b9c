package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
)

// openTest opens a fresh store; see openAt.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	return openAt(t, path, Options{}), path
}

// openAt opens the store at path and, when the test ends, closes it and
// checks the integrity of the file.
func openAt(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		checkIntegrity(t, path)
	})
	return s
}

func checkIntegrity(t testing.TB, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity check of %s: %q, %v", path, res, err)
	}
}

// dump returns every row of every table, to compare whole states.
func dump(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	var tables []string
	rows, err := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := s.db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					vals[i] = string(b)
				}
			}
			out[table] = append(out[table], fmt.Sprintf("%q", vals))
		}
		rows.Close()
		slices.Sort(out[table])
	}
	return out
}

// count returns the number of rows in a table.
func count(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// withInstance deploys module "h1" and creates instance "i1" of "Greeting"
// on it at t0, with input "world".
func withInstance(t testing.TB, s *Store) {
	t.Helper()
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, Activities: []string{"SayHello"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	create(t, s, "i1")
}

// create creates an instance of "Greeting" on module "h1" at t0.
func create(t testing.TB, s *Store, id string) {
	t.Helper()
	if err := s.CreateInstance(ctx, store.NewInstance{ID: id, Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"world"`), Now: t0}); err != nil {
		t.Fatal(err)
	}
}

// lock locks the next instance at now for a minute, and fails the test if
// there is none.
func lock(t *testing.T, s *Store, now time.Time) *store.WorkItem {
	t.Helper()
	item, err := lockNext(s, now, time.Minute)
	if err != nil || item == nil {
		t.Fatalf("LockNextInstances(%v) = %+v, %v; want work", now, item, err)
	}
	return item
}

// noWork fails the test if an instance can be locked at now.
func noWork(t *testing.T, s *Store, now time.Time) {
	t.Helper()
	if item, err := lockNext(s, now, time.Minute); item != nil || err != nil {
		t.Fatalf("LockNextInstances(%v) = %+v, %v; want nothing", now, item, err)
	}
}

// leaseActivity leases the next activity task at now, and fails the test
// if there is none.
func leaseActivity(t *testing.T, s *Store, now time.Time, lease time.Duration) *store.ActivityWork {
	t.Helper()
	w, err := leaseNext(s, now, lease)
	if err != nil || w == nil {
		t.Fatalf("LockNextActivities(%v) = %+v, %v; want a task", now, w, err)
	}
	return w
}

func commit(t *testing.T, s *Store, c store.TurnCommit) {
	t.Helper()
	if err := s.CommitTurn(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func event(id int64, kind engine.EventKind) engine.Event {
	return engine.Event{ID: id, Kind: kind, Time: t0.Add(time.Duration(id) * time.Second)}
}

// timerDue is when the timer of firstTurn is due.
var timerDue = t0.Add(time.Hour)

// firstTurn commits the first turn of "i1" (see withInstance) at t0: the
// history becomes OrchestrationStarted, ActivityScheduled("SayHello") and
// TimerCreated, with a task for the activity and a timer due at timerDue.
func firstTurn(t *testing.T, s *Store) []engine.Event {
	t.Helper()
	item := lock(t, s, t0)
	started := event(1, engine.OrchestrationStarted)
	started.Name, started.InstanceID, started.Input = "Greeting", "i1", json.RawMessage(`"world"`)
	scheduled := event(2, engine.ActivityScheduled)
	scheduled.Name, scheduled.Input = "SayHello", json.RawMessage(`"world"`)
	timer := event(3, engine.TimerCreated)
	timer.FireAt = &timerDue
	events := []engine.Event{started, scheduled, timer}
	commit(t, s, store.TurnCommit{
		InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents:  events,
		Activities: []engine.ActivityTask{{ScheduleID: 2, Name: "SayHello", Input: json.RawMessage(`"world"`)}},
		Timers:     []engine.TimerTask{{ScheduleID: 3, FireAt: timerDue}},
		Status:     engine.StatusRunning,
		Consumed:   []int64{item.Messages[0].ID},
	})
	return events
}

// messageEvents returns the events of messages.
func messageEvents(ms []store.Message) []engine.Event {
	var out []engine.Event
	for _, m := range ms {
		out = append(out, m.Event)
	}
	return out
}

// lockNext locks the next instance, if there is one.
func lockNext(s *Store, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	items, err := s.LockNextInstances(ctx, now, lease, 1, nil)
	if len(items) == 0 {
		return nil, err
	}
	return items[0], err
}

// leaseNext leases the next activity task, if there is one.
func leaseNext(s *Store, now time.Time, lease time.Duration) (*store.ActivityWork, error) {
	ws, err := s.LockNextActivities(ctx, now, lease, 1, nil)
	if len(ws) == 0 {
		return nil, err
	}
	return ws[0], err
}

// holdWriter has a write of its own hold the writer, so that the writes
// after it queue, until the returned release is called; release returns
// the write's error.
func holdWriter(s *Store) (release func() error) {
	held, released, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.write(ctx, func(context.Context, txConn) error {
			close(held)
			<-released
			return nil
		})
	}()
	<-held
	return func() error {
		close(released)
		return <-done
	}
}

// waitQueued waits until n writes wait in the writer's queue.
func waitQueued(s *Store, n int) {
	for {
		s.writers.mu.Lock()
		queued := len(s.writers.queue)
		s.writers.mu.Unlock()
		if queued == n {
			return
		}
		runtime.Gosched()
	}
}
