package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// BenchmarkColdReplay replays a 10,002-event history (a Sequential
// orchestration of the benchmark guest that called 5,000 activities) on a
// fresh wasm instance: the cost of a cache miss on a long history.
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
	b.ResetTimer()
	for b.Loop() {
		rep, err := h.Replay(ctx, "seq", client.ReplayRequest{})
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
