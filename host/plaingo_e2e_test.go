package host_test

import (
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// TestPlainGoroutineFailsThroughTheDispatchers runs the fan-out from plain
// goroutines on a host with its own dispatchers: the instance ends Failed,
// and its status names the cause and what to use instead, where it used to
// stay Running with nothing pending.
func TestPlainGoroutineFailsThroughTheDispatchers(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/plaingo")
	inst := h.run(t, "FanOut", `3`)
	if inst.Status != engine.StatusFailed || inst.Failure == nil ||
		!strings.HasPrefix(inst.Failure.Message, "durabox: ctx.CallActivity was called from a goroutine the orchestration started with a go statement (or a finalizer): ") ||
		!strings.Contains(inst.Failure.Message, "start the goroutine with ctx.Go") {
		t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	if !strings.Contains(inst.Failure.Details, "main.go") {
		t.Errorf("details do not show the goroutine's stack:\n%s", inst.Failure.Details)
	}
}
