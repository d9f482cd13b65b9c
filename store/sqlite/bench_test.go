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
