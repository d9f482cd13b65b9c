package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

func TestCreateInstance(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}}); err != nil {
		t.Fatal(err)
	}
	// A time in another zone comes back in UTC.
	now := t0.In(time.FixedZone("Tokyo", 9*3600))
	if err := s.CreateInstance(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"world"`), Now: now}); err != nil {
		t.Fatal(err)
	}
	want := store.Instance{ID: "i1", Name: "Greeting", ModuleHash: "h1", ExecutionID: 1, Status: engine.StatusPending,
		Input: json.RawMessage(`"world"`), CreatedAt: t0, UpdatedAt: t0}
	if inst, err := s.GetInstance(ctx, "i1"); err != nil || !reflect.DeepEqual(inst, want) {
		t.Fatalf("GetInstance = %+v, %v\nwant %+v", inst, err, want)
	}
	item := lock(t, s, t0)
	wantMessages := []engine.Event{{Kind: engine.OrchestrationStarted, Name: "Greeting", InstanceID: "i1", Input: json.RawMessage(`"world"`)}}
	if !reflect.DeepEqual(item.Instance, want) || item.HistoryLen != 0 || !reflect.DeepEqual(messageEvents(item.Messages), wantMessages) {
		t.Fatalf("work item %+v", item)
	}
}

func TestCreateInstanceRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		instance store.NewInstance
		is       error
		want     string
	}{
		{"id taken", store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Now: t0},
			store.ErrInstanceExists, `sqlite: create instance "i1": instance already exists`},
		{"module not deployed", store.NewInstance{ID: "i2", Name: "Greeting", ModuleHash: "h9", Now: t0},
			store.ErrNotFound, `sqlite: create instance "i2": module h9 not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			withInstance(t, s)
			before := dump(t, s)
			err := s.CreateInstance(ctx, tt.instance)
			if !errors.Is(err, tt.is) || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			if after := dump(t, s); !reflect.DeepEqual(after, before) {
				t.Fatalf("the refused create changed the store:\n%q\nwas\n%q", after, before)
			}
		})
	}
}

func TestInstanceNotFound(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	tests := []struct {
		name string
		call func() error
	}{
		{"GetInstance", func() error { _, err := s.GetInstance(ctx, "nope"); return err }},
		{"History", func() error { _, err := s.History(ctx, "nope", 0); return err }},
		{"Enqueue", func() error {
			return s.Enqueue(ctx, "nope", engine.Event{Kind: engine.ExternalEvent, Name: "X"}, t0, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, store.ErrNotFound) || !strings.HasSuffix(err.Error(), `instance "nope" not found`) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if n := count(t, s, "messages"); n != 1 {
		t.Fatalf("%d messages, want only i1's start", n)
	}
}

func TestListInstances(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	for _, n := range []store.NewInstance{
		{ID: "b", Name: "Greeting", ModuleHash: "h1", Now: t0.Add(time.Second)},
		{ID: "a", Name: "Greeting", ModuleHash: "h1", Now: t0.Add(time.Second)},
		{ID: "c", Name: "Greeting", ModuleHash: "h1", Now: t0.Add(-time.Second)},
	} {
		if err := s.CreateInstance(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.ListInstances(ctx, store.InstanceQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	list := page.Instances
	var ids []string
	for _, inst := range list {
		ids = append(ids, inst.ID)
	}
	// Newest first; of two created at the same time, the one created last.
	if want := []string{"a", "b", "i1", "c"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ListInstances = %q, want %q", ids, want)
	}
	if !list[0].CreatedAt.Equal(t0.Add(time.Second)) || list[0].Status != engine.StatusPending {
		t.Fatalf("first instance %+v", list[0])
	}
}

func TestEnqueue(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	raised := []engine.Event{
		{Kind: engine.ExternalEvent, Name: "Approve", Result: json.RawMessage(`true`)},
		{Kind: engine.ExternalEventPersistent, Name: "Note", Result: json.RawMessage(`"n"`)},
	}
	for _, ev := range raised {
		if err := s.Enqueue(ctx, "i1", ev, t0, nil); err != nil {
			t.Fatal(err)
		}
	}
	item := lock(t, s, t0)
	want := append([]engine.Event{{Kind: engine.OrchestrationStarted, Name: "Greeting", InstanceID: "i1", Input: json.RawMessage(`"world"`)}}, raised...)
	if got := messageEvents(item.Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("messages %+v\nwant %+v", got, want)
	}
	for i := 1; i < len(item.Messages); i++ {
		if item.Messages[i].ID <= item.Messages[i-1].ID {
			t.Fatalf("message ids out of order: %+v", item.Messages)
		}
	}
}

// A corrupt event id (far past the history's length) does not make a
// history read try to allocate room for that many events: the read
// returns what is there, and the engine refuses it.
func TestHistoryWithACorruptEventID(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateInstance(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"world"`), Now: t0}); err != nil {
		t.Fatal(err)
	}
	const id = 1 << 40
	payload := fmt.Sprintf(`{"id":%d,"kind":"OrchestrationStarted","time":"2026-11-22T12:00:00Z"}`, id)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO history (instance_id, execution_id, event_id, payload) VALUES ('i1', 1, ?, ?)`, id, payload); err != nil {
		t.Fatal(err)
	}
	history, err := s.History(ctx, "i1", 1)
	if err != nil || len(history) != 1 || history[0].ID != id {
		t.Fatalf("History = %+v, %v", history, err)
	}
}

// TestLongHistoryInHalves reads histories long enough to be read in two
// halves at once: whole (by more callers at once than there are read
// connections), grown by a commit after their length was read, and purged
// after it.
func TestLongHistoryInHalves(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Sequential"}}); err != nil {
		t.Fatal(err)
	}
	// run starts instance id and commits a turn of n events after its
	// start, leaving it running or, with done, completed.
	run := func(id string, n int, done bool) {
		t.Helper()
		if err := s.CreateInstance(ctx, store.NewInstance{ID: id, Name: "Sequential", ModuleHash: "h1", Now: t0}); err != nil {
			t.Fatal(err)
		}
		events := []engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Name: "Sequential", InstanceID: id, Time: t0}}
		status := engine.StatusRunning
		if done {
			status = engine.StatusCompleted
		}
		commitEvents(t, s, id, events, n, status)
	}
	check := func(id string, want int) {
		t.Helper()
		history, err := s.History(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkIDs(t, history, want)
	}

	for _, n := range []int{halvedHistory - 2, halvedHistory, 2*halvedHistory + 1} {
		id := fmt.Sprint("whole-", n)
		run(id, n-1, false)
		check(id, n)
	}

	t.Run("read by more callers at once than there are read connections", func(t *testing.T) {
		id := fmt.Sprint("whole-", 2*halvedHistory+1)
		histories := make([][]engine.Event, 2*maxReaders)
		errs := make([]error, len(histories))
		var wg sync.WaitGroup
		for i := range histories {
			wg.Go(func() { histories[i], errs[i] = s.History(ctx, id, 0) })
		}
		wg.Wait()
		for i, history := range histories {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			checkIDs(t, history, 2*halvedHistory+1)
		}
	})

	t.Run("grown since its length was read", func(t *testing.T) {
		run("grown", 2*halvedHistory, false)
		q := afterGuess{s.readers, func() {
			if err := s.Enqueue(ctx, "grown", engine.Event{Kind: engine.ExternalEvent, Name: "more", Time: t0}, t0, nil); err != nil {
				t.Fatal(err)
			}
			commitEvents(t, s, "grown", nil, 3*halvedHistory, engine.StatusRunning)
		}}
		history, err := history(ctx, q, "grown", 1)
		if err != nil {
			t.Fatal(err)
		}
		checkIDs(t, history, 5*halvedHistory+1)
	})

	t.Run("purged since its length was read", func(t *testing.T) {
		run("purged", 2*halvedHistory, true)
		q := afterGuess{s.readers, func() {
			if err := s.Purge(ctx, "purged"); err != nil {
				t.Fatal(err)
			}
		}}
		history, err := history(ctx, q, "purged", 1)
		if err != nil || len(history) != 0 {
			t.Fatalf("history = %d events, %v; want none: the instance was purged", len(history), err)
		}
	})
}

// commitEvents locks instance id and commits a turn of events followed by
// n more, ActivityScheduled and ActivityCompleted in turn, at status.
func commitEvents(t *testing.T, s *Store, id string, events []engine.Event, n int, status engine.Status) {
	t.Helper()
	item, err := lockNext(s, t0, time.Minute)
	if err != nil || item == nil || item.Instance.ID != id {
		t.Fatalf("lockNext = %+v, %v; want %s", item, err, id)
	}
	next := item.HistoryLen + int64(len(events)) + 1
	for i := range n {
		ev := engine.Event{ID: next + int64(i), Kind: engine.ActivityScheduled, Name: "Echo", Input: json.RawMessage(fmt.Sprint(i)), Time: t0}
		if i%2 == 1 {
			ev = engine.Event{ID: next + int64(i), Kind: engine.ActivityCompleted, ScheduleID: next + int64(i) - 1, Result: json.RawMessage(fmt.Sprint(i)), Time: t0}
		}
		events = append(events, ev)
	}
	var consumed []int64
	for _, m := range item.Messages {
		consumed = append(consumed, m.ID)
	}
	if err := s.CommitTurn(ctx, store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: events, Status: status, Consumed: consumed}); err != nil {
		t.Fatal(err)
	}
}

// checkIDs fails unless history holds events 1 to want, in order.
func checkIDs(t *testing.T, history []engine.Event, want int) {
	t.Helper()
	if len(history) != want {
		t.Fatalf("history has %d events, want %d", len(history), want)
	}
	for i, ev := range history {
		if ev.ID != int64(i)+1 {
			t.Fatalf("event %d has id %d", i+1, ev.ID)
		}
		if i > 0 && ev.Kind != engine.ActivityScheduled && ev.Kind != engine.ActivityCompleted {
			t.Fatalf("event %d is a %s", i+1, ev.Kind)
		}
	}
}

// afterGuess is a querier that runs then once the length of a history has
// been read, before its events are.
type afterGuess struct {
	readPool
	then func()
}

func (q afterGuess) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	row := q.readPool.QueryRowContext(ctx, query, args...)
	q.then()
	return row
}
