package sqlite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// BenchmarkTurn_1k measures one turn and one activity, on 1,000 instances
// with work waiting: lock an instance with its history and its message,
// commit two events, an activity task and the message's removal, then lease
// the task and complete it. Durability is normal, so that the numbers are
// the store's and not the disk's.
func BenchmarkTurn_1k(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{Durability: DurabilityNormal})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"O"}}); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if err := s.CreateInstance(ctx, store.NewInstance{ID: fmt.Sprint(i), Name: "O", ModuleHash: "h1", Input: json.RawMessage(`1`), Now: t0}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		item, err := lockNext(s, t0, time.Minute)
		if err != nil || item == nil {
			b.Fatal(item, err)
		}
		next := item.HistoryLen + 1
		ev := engine.Event{ID: next + 1, Kind: engine.ActivityScheduled, Name: "A", Input: json.RawMessage(`1`), Time: t0}
		err = s.CommitTurn(ctx, store.TurnCommit{InstanceID: item.Instance.ID, ExecutionID: 1, LockToken: item.LockToken, Now: t0,
			NewEvents:  []engine.Event{{ID: next, Kind: engine.ActivityCompleted, ScheduleID: next - 1, Result: json.RawMessage(`1`), Time: t0}, ev},
			Activities: []engine.ActivityTask{{ScheduleID: ev.ID, Name: "A", Input: ev.Input}},
			Status:     engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
		if err != nil {
			b.Fatal(err)
		}
		w, err := leaseNext(s, t0, time.Minute)
		if err != nil || w == nil {
			b.Fatal(w, err)
		}
		if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: ev.ID, Result: json.RawMessage(`1`)}, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHistory_10k reads a history of 10,002 events, the one a
// Sequential orchestration of 5,000 activity calls records: what a cold
// replay of it reads before the guest sees any of it.
func BenchmarkHistory_10k(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{Durability: DurabilityNormal})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"Sequential"}}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateInstance(ctx, store.NewInstance{ID: "seq", Name: "Sequential", ModuleHash: "h1", Input: json.RawMessage(`5000`), Now: t0}); err != nil {
		b.Fatal(err)
	}
	item, err := lockNext(s, t0, time.Minute)
	if err != nil || item == nil {
		b.Fatal(item, err)
	}
	events := []engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Name: "Sequential", InstanceID: "seq", Input: json.RawMessage(`5000`), Time: t0}}
	for i := range 5000 {
		n := json.RawMessage(fmt.Sprint(i))
		at := t0.Add(time.Duration(i) * time.Millisecond)
		id := int64(len(events)) + 1
		events = append(events,
			engine.Event{ID: id, Kind: engine.ActivityScheduled, Name: "Echo", Input: n, Time: at},
			engine.Event{ID: id + 1, Kind: engine.ActivityCompleted, ScheduleID: id, Result: n, Time: at})
	}
	events = append(events, engine.Event{ID: int64(len(events)) + 1, Kind: engine.OrchestrationCompleted, Result: json.RawMessage(`12497500`), Time: t0})
	err = s.CommitTurn(ctx, store.TurnCommit{InstanceID: "seq", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: events, Status: engine.StatusCompleted, Result: json.RawMessage(`12497500`), Consumed: []int64{item.Messages[0].ID}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		history, err := s.History(ctx, "seq", 0)
		if err != nil || len(history) != len(events) {
			b.Fatal(len(history), err)
		}
	}
}
