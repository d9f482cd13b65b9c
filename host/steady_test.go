package host_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/host/server"
)

// TestCacheHoldsNoFinishedInstance runs Approval instances on the real host,
// most of them approved as soon as they wait (so that the turn that
// finishes one often follows the turn before it at once, on another
// worker), the rest left waiting, and reads GET /metrics once every one
// approved has finished: the live cache keeps only the instances still
// waiting, and the timers are only theirs (a finished instance's timer,
// kept until it is purged, waits for no one).
func TestCacheHoldsNoFinishedInstance(t *testing.T) {
	t.Parallel()
	const approved, waiting = 40, 3
	ctx := context.Background()
	h := startHost(t, host.Options{Metrics: metrics.New()})
	h.deploy(t, "examples/wasm/approval")
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	start := func(id string) {
		t.Helper()
		if _, err := h.Start(ctx, "Approval", []byte(`{"item":"laptop","timeout":"1h"}`), id); err != nil {
			t.Fatal(err)
		}
	}
	for i := range approved {
		id := fmt.Sprint("approved-", i)
		start(id)
		h.until(t, id, "the wait", has(1, engine.ExternalSubscribed))
		if err := h.Raise(ctx, id, "Approval", []byte(`{"approved": true, "by": "ada"}`), false); err != nil {
			t.Fatal(err)
		}
	}
	for i := range waiting {
		id := fmt.Sprint("waiting-", i)
		start(id)
		h.until(t, id, "the wait", has(1, engine.ExternalSubscribed))
	}
	for i := range approved {
		h.finish(t, fmt.Sprint("approved-", i), `"laptop approved by ada"`)
	}
	m := scrape(t, handler)
	if live := value(t, m, "durabox_live_instances"); live > waiting {
		t.Errorf("durabox_live_instances is %g once %d instances finished; want at most the %d still waiting", live, approved, waiting)
	}
	if timers := value(t, m, "durabox_queue_timers"); timers != waiting {
		t.Errorf("durabox_queue_timers is %g; want %d, the timers of the instances still waiting", timers, waiting)
	}
}
