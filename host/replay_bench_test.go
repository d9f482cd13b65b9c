package host

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// BenchmarkColdReplay replays a 10,002-event history (a Sequential
// orchestration of the benchmark guest that called 5,000 activities) on a
// fresh wasm instance: the cost of a cache miss on a long history. It
// reports the process's CPU time per replay too (cpu-ms/op), which a
// machine shared with other work changes less than the wall time.
func BenchmarkColdReplay(b *testing.B) {
	ctx := context.Background()
	wasm, err := guestbuild.Wasm("internal/bench/guest")
	if err != nil {
		b.Fatal(err)
	}
	h := newBareHostWith(b, Options{})
	if _, err := h.Deploy(ctx, wasm); err != nil {
		b.Fatal(err)
	}
	if _, err := h.Start(ctx, "Sequential", json.RawMessage(`5000`), "seq"); err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	inst, err := h.Wait(waitCtx, "seq")
	stop()
	<-done
	if err != nil || inst.Status != engine.StatusCompleted {
		b.Fatalf("the instance to replay: %+v, %v", inst, err)
	}
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		rep, err := h.Replay(ctx, "seq", api.ReplayRequest{})
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
