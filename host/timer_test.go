package host_test

import (
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// TestTimersOfTheTimePackage: on either runtime, every timer of the time
// package an orchestration leaves running at the end of a step fails its
// instance, naming the call and what to use instead, and the host serves
// on; one it stops within the step is none of the host's business (nor is
// the one crypto/rand's first read starts and stops); an activity keeps
// them all, on the real clock.
func TestTimersOfTheTimePackage(t *testing.T) {
	t.Parallel()
	refused := func(call, instead string) string {
		return "orchestration crashed applying event 1: the orchestration left a timer of the time package running (" + call +
			"), which an orchestration cannot keep: it would not fire when due, nor survive a restart; " + instead
	}
	for _, runtime := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run(runtime, func(t *testing.T) {
			h := startHost(t, host.Options{Runtime: runtime})
			h.deploy(t, "host/testdata/guests/crashy")
			for _, tt := range []struct{ orchestration, call, instead string }{
				{"AfterFunc", "time.AfterFunc", "use ctx.NewTimer or ctx.Sleep (in a branch started with ctx.Go, to run code when it fires)"},
				{"NewTimer", "time.NewTimer or time.After", "use ctx.NewTimer (and ctx.Select to race it against other futures)"},
				{"After", "time.NewTimer or time.After", "use ctx.NewTimer (and ctx.Select to race it against other futures)"},
				{"NewTicker", "time.NewTicker or time.Tick", "use ctx.Sleep in a loop"},
				{"Tick", "time.NewTicker or time.Tick", "use ctx.Sleep in a loop"},
				{"WithTimeout", "context.WithTimeout or context.WithDeadline", "use ctx.NewTimer, and ctx.Select to race it against the work"},
				{"WithDeadline", "context.WithTimeout or context.WithDeadline", "use ctx.NewTimer, and ctx.Select to race it against the work"},
			} {
				t.Run(tt.orchestration, func(t *testing.T) {
					inst := h.run(t, tt.orchestration, `null`)
					if want := refused(tt.call, tt.instead); inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != want {
						t.Fatalf("status %s result %s failure %+v\nwant the failure %q", inst.Status, inst.Result, inst.Failure, want)
					}
					if healthy := h.run(t, "Echo", `"still here"`); healthy.Status != engine.StatusCompleted || string(healthy.Result) != `"still here"` {
						t.Fatalf("healthy instance: status %s result %s failure %+v", healthy.Status, healthy.Result, healthy.Failure)
					}
				})
			}
			if inst := h.run(t, "StopsItsTimers", `null`); inst.Status != engine.StatusCompleted || string(inst.Result) != `"context canceled"` {
				t.Fatalf("timers stopped within the step: status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
			}
			const want = `"AfterFunc, NewTimer, After, NewTicker, Tick, WithTimeout: context deadline exceeded"`
			if inst := h.run(t, "CallRealTimers", `null`); inst.Status != engine.StatusCompleted || string(inst.Result) != want {
				t.Fatalf("an activity's timers: status %s result %s failure %+v; want result %s", inst.Status, inst.Result, inst.Failure, want)
			}
		})
	}
}
