package host

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

// BenchmarkUpgradeDryRun_1k checks 1,000 open instances of the versions
// guest (a third of them past the changed point) against v2: one replay
// each, on a fresh guest, one per CPU at a time.
func BenchmarkUpgradeDryRun_1k(b *testing.B) {
	ctx := context.Background()
	h := newBareHostWith(b, Options{})
	hashes := deployGuest(b, h, "host/testdata/guests/versions", nil, []string{"main.version=v2"})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	defer func() { stop(); <-done }()
	const n = 1000
	for i := range n {
		if _, err := h.StartOn(ctx, hashes[0], "Flow", []byte(`"x"`), fmt.Sprintf("f%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	// waitAll waits until each instance waits for its k-th "go" at least.
	waitAll := func(k func(i int) int) {
		for i := range n {
			id := fmt.Sprintf("f%d", i)
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
				events, _ := h.History(ctx, id)
				if count := len(slices.DeleteFunc(events, func(ev engine.Event) bool { return ev.Kind != engine.ExternalSubscribed })); count >= k(i) {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("%s never waited %d times", id, k(i))
				}
			}
		}
	}
	waitAll(func(int) int { return 1 })
	for i := 0; i < n; i += 3 {
		if err := h.Raise(ctx, fmt.Sprintf("f%d", i), "go", nil, false); err != nil {
			b.Fatal(err)
		}
	}
	waitAll(func(i int) int { return 1 + (2-i%3)/2 })
	b.ResetTimer()
	for b.Loop() {
		report, err := h.Upgrade(ctx, api.UpgradeRequest{From: hashes[0], To: hashes[1], DryRun: true}, nil)
		if err != nil || report.Summary.Diverges != (n+2)/3 || report.Summary.Compatible != n-(n+2)/3 {
			b.Fatalf("%+v, %v", report.Summary, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "us/instance")
}
