package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store/sqlite"
)

// BenchmarkTurns_100 runs the benchmark guest's Sequential(100) through a
// running host, 4 instances at once: 101 turns and 100 activities each, on
// a store at normal durability, so that the figures are the host's and
// not the disk's, with the metrics that serve wires. It reports the time
// per turn: the host's hot path.
func BenchmarkTurns_100(b *testing.B) { benchTurns(b, Options{}) }

// BenchmarkTurnsTraced_100 is BenchmarkTurns_100 with tracing on, to an
// exporter that drops what it is given: the cost of making and batching
// the spans.
func BenchmarkTurnsTraced_100(b *testing.B) {
	benchTurns(b, Options{TraceExporter: tracetest.NewNoopExporter()})
}

// benchTurns runs BenchmarkTurns_100 on a host with opts.
func benchTurns(b *testing.B, opts Options) {
	ctx := context.Background()
	wasm, err := guestbuild.Wasm("internal/bench/guest")
	if err != nil {
		b.Fatal(err)
	}
	m := metrics.New()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "durabox.db"), sqlite.Options{Durability: sqlite.DurabilityNormal, OnCommit: m.ObserveCommit})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	opts.Metrics = m
	h, err := New(st, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Deploy(ctx, wasm); err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()
	const parallel, activities = 4, 100
	n := 0
	for b.Loop() {
		ids := make([]string, parallel)
		for i := range ids {
			n++
			if ids[i], err = h.Start(ctx, "Sequential", json.RawMessage(fmt.Sprint(activities)), ""); err != nil {
				b.Fatal(err)
			}
		}
		for _, id := range ids {
			waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
			inst, err := h.Wait(waitCtx, id)
			cancel()
			if err != nil || inst.Status != engine.StatusCompleted {
				b.Fatalf("instance %s: %+v, %v", id, inst, err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*(activities+1)), "ns/turn")
}
