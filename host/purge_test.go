package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
)

func TestPurge(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/approval")
	ctx := context.Background()
	decide := func(item string) {
		t.Helper()
		if _, err := h.Start(ctx, "Approval", []byte(`{"item":"`+item+`","timeout":"1h"}`), "job"); err != nil {
			t.Fatal(err)
		}
		h.until(t, "job", "the wait", has(1, engine.ExternalSubscribed))
		err := h.Purge(ctx, "job")
		if want := `host: instance not finished: "job" has not ended; cancel or terminate it, or wait for it to end, then purge it`; !errors.Is(err, api.ErrNotFinished) || err.Error() != want {
			t.Fatalf("purge of a running instance: %v; want %q", err, want)
		}
		if err := h.Raise(ctx, "job", "Approval", []byte(`{"approved": true, "by": "ada"}`), false); err != nil {
			t.Fatal(err)
		}
		h.finish(t, "job", `"`+item+` approved by ada"`)
	}
	decide("laptop")
	if err := h.Purge(ctx, "job"); err != nil {
		t.Fatalf("purge of a completed instance: %v", err)
	}
	if _, err := h.Instance(ctx, "job"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("instance after the purge: %v; want ErrNotFound", err)
	}
	if _, err := h.History(ctx, "job"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("history after the purge: %v; want ErrNotFound", err)
	}
	if err := h.Purge(ctx, "job"); err == nil || err.Error() != `host: instance not found: "job"` {
		t.Fatalf("second purge: %v; want instance not found", err)
	}
	// The id is free again, and the new instance's history is its own.
	decide("chair")
	if events := h.history(t, "job"); count(events, engine.OrchestrationStarted) != 1 || string(events[0].Input) != `{"item":"chair","timeout":"1h"}` {
		t.Fatalf("history of the new instance: %v", shape(events))
	}
}
