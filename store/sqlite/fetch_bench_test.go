package sqlite

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// BenchmarkLeaseOneBesideHeld_N measures LockNextActivities taking one
// task of an instance's 1,000 while N of them are held (leased, as a
// fan-out's are while their results wait for the instance's next turn).
// The fetch passes over the held tasks (their ids, a JSON list, excluded
// in the query), so it costs in proportion to N (BENCHMARKS.md, the runs
// of 2026-11-28). Each op leases one more: N grows by b.N over the run;
// run it with a fixed -benchtime such as 50x.
func BenchmarkLeaseOneBesideHeld_0(b *testing.B)   { benchLeaseBesideHeld(b, 0) }
func BenchmarkLeaseOneBesideHeld_150(b *testing.B) { benchLeaseBesideHeld(b, 150) }
func BenchmarkLeaseOneBesideHeld_900(b *testing.B) { benchLeaseBesideHeld(b, 900) }

func benchLeaseBesideHeld(b *testing.B, held int) {
	s, _ := openTest(b)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: t0}); err != nil {
		b.Fatal(err)
	}
	item, err := s.CreateLocked(ctx, store.NewInstance{ID: "i1", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"w"`), Now: t0}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	if held+b.N > n {
		b.Fatalf("%d held and %d ops need more than the instance's %d tasks: run with a smaller -benchtime", held, b.N, n)
	}
	c := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Consumed: []int64{item.Messages[0].ID}}
	for i := range n {
		ev := event(int64(i+2), engine.ActivityScheduled)
		ev.Name = "Echo"
		c.NewEvents = append(c.NewEvents, ev)
		c.Activities = append(c.Activities, engine.ActivityTask{ScheduleID: ev.ID, Name: "Echo", Input: json.RawMessage(fmt.Sprint(i))})
	}
	if err := s.CommitTurn(ctx, c); err != nil {
		b.Fatal(err)
	}
	if held > 0 {
		if ws, err := s.LockNextActivities(ctx, t0, time.Hour, held, nil); err != nil || len(ws) != held {
			b.Fatalf("leased %d of %d: %v", len(ws), held, err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if ws, err := s.LockNextActivities(ctx, t0, time.Hour, 1, nil); err != nil || len(ws) != 1 {
			b.Fatalf("leased %d: %v", len(ws), err)
		}
	}
}
