package sqlite

import (
	"testing"
	"time"
)

// BenchmarkLeaseOneBesideHeld_N measures LockNextActivities taking one
// task of an instance's 1,000 while N of them are held (leased, as a
// fan-out's are while their results wait for the instance's next turn).
// The fetch passed over the held tasks (their ids, a JSON list, excluded
// in the query), and cost in proportion to N; it now reads from past them
// (floor.go), and costs the same at every N (BENCHMARKS.md, the runs of
// 2026-11-28). Each op leases one more: N grows by b.N over the run; run
// it with a fixed -benchtime such as 50x.
func BenchmarkLeaseOneBesideHeld_0(b *testing.B)   { benchLeaseBesideHeld(b, 0) }
func BenchmarkLeaseOneBesideHeld_150(b *testing.B) { benchLeaseBesideHeld(b, 150) }
func BenchmarkLeaseOneBesideHeld_900(b *testing.B) { benchLeaseBesideHeld(b, 900) }

func benchLeaseBesideHeld(b *testing.B, held int) {
	s, _ := openTest(b)
	const n = 1000
	if held+b.N > n {
		b.Fatalf("%d held and %d ops need more than the instance's %d tasks: run with a smaller -benchtime", held, b.N, n)
	}
	queueTasks(b, s, "i1", n)
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
