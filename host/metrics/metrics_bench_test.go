package metrics

import (
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// BenchmarkMetricsTurn measures what metrics add to a turn and its
// activity: a cache hit, the turn's count and latency, the activity's
// count and latency, and a store commit (one per turn at most; group
// commit shares them).
func BenchmarkMetricsTurn(b *testing.B) {
	m := New()
	for b.Loop() {
		m.CacheHit()
		m.Turn("Greeting", time.Millisecond, engine.StatusRunning)
		m.Activity("SayHello", engine.ActivityCompleted, time.Millisecond)
		m.ObserveCommit(store.CommitStats{Writes: 3, Duration: time.Millisecond})
	}
}
