package host_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// scenario is one orchestration of a test guest, run to its end.
type scenario struct {
	pkg, orchestration, input string
}

// byHeap holds the orchestrations whose result depends on their heap, and
// so on how the host batched their messages into turns, which timing
// decides: two live runs differ, while each history replays the same
// everywhere.
var byHeap = map[string]bool{"Heap": true}

// differential lists a run of every test guest: the determinism guests,
// the walkthroughs, the examples and the hostile guests.
var differential = []scenario{
	{"host/testdata/guests/chaos", "Chaos", `3`},
	{"host/testdata/guests/heap", "Heap", `3`},
	{"host/testdata/guests/walkthroughs", "SelectThenWork", `null`},
	{"host/testdata/guests/walkthroughs", "RepeatedSelect", `3`},
	{"host/testdata/guests/walkthroughs", "FanOut", `4`},
	{"host/testdata/guests/walkthroughs", "Retrying", `"AlwaysFails"`},
	{"host/testdata/guests/walkthroughs", "Sleeper", `"10ms"`},
	{"examples/wasm/hello", "Greeting", `"world"`},
	{"examples/wasm/retry", "Retry", `{"attempts": 3, "failures": 2, "delay": "10ms"}`},
	{"examples/wasm/parentchild", "Parent", `["a", "b"]`},
	{"examples/wasm/fanout", "WordCount", `["one two", "three"]`},
	{"examples/wasm/approval", "Approval", `{"item": "chair", "timeout": "10ms"}`},
	{"examples/wasm/eternal", "Heartbeat", `{"every": "10ms", "rounds": 3}`},
	{"host/testdata/guests/hostile", "Loop", `null`},
	{"host/testdata/guests/hostile", "Allocate", `null`},
	{"host/testdata/guests/hostile", "Recurse", `null`},
	{"host/testdata/guests/hostile", "NilDereference", `null`},
	{"host/testdata/guests/hostile", "Exit", `null`},
	{"host/testdata/guests/hostile", "ReadFile", `null`},
	{"host/testdata/guests/hostile", "Dial", `null`},
	{"host/testdata/guests/hostile", "Getenv", `null`},
}

// TestRuntimesAgree runs every test guest live on each runtime, then
// replays every execution of every instance (children included) on both:
// the two replays must report the same, byte for byte (the same events
// reproduced, the same status, the same failure cause), and the live runs
// must end alike on both runtimes (with the same result, unless it
// depends on the heap).
func TestRuntimesAgree(t *testing.T) {
	t.Parallel()
	// The endless loop is stopped by the step budget, the same way on
	// both runtimes; a wall-clock deadline would stop a replay on a loaded
	// machine wherever it happened to be, even in a guest that was about
	// to overflow its stack.
	opts := func(runtime string) host.Options {
		return host.Options{Runtime: runtime, StepBudget: 100_000_000, ActivationTimeout: time.Minute, MemoryLimit: 128 << 20}
	}
	ends := map[string][]string{}
	for _, live := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run("live on "+live, func(t *testing.T) {
			h := startHost(t, opts(live))
			deployed := map[string]bool{}
			for _, s := range differential {
				if !deployed[s.pkg] {
					h.deploy(t, s.pkg)
					deployed[s.pkg] = true
				}
				inst := h.run(t, s.orchestration, s.input)
				if byHeap[s.orchestration] {
					inst.Result = nil
				}
				end, _ := json.Marshal(struct {
					Status          string
					Result, Failure any
					Executions      int64
				}{string(inst.Status), inst.Result, inst.Failure, inst.ExecutionID})
				ends[live] = append(ends[live], string(end))
			}
			replayOnBoth(t, h, opts)
		})
	}
	for i, s := range differential {
		if a, b := ends[host.RuntimeWazero][i], ends[host.RuntimeWasmtime][i]; a != b {
			t.Errorf("%s ended differently live:\nwazero:   %s\nwasmtime: %s", s.orchestration, a, b)
		}
	}
}

// replayOnBoth replays every execution of every instance of h on a host of
// each runtime (over h's store, made with opts): the two must report the
// same, byte for byte, and neither may diverge.
func replayOnBoth(t *testing.T, h *testHost, opts func(runtime string) host.Options) {
	t.Helper()
	ctx := context.Background()
	replayers := map[string]*host.Host{}
	for _, rt := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		o := opts(rt)
		o.CacheDir = host.TestCacheDir
		r, err := host.New(h.st, o)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		replayers[rt] = r
	}
	page, err := h.List(ctx, store.InstanceQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range page.Instances {
		for execution := int64(1); execution <= sum.ExecutionID; execution++ {
			reports := map[string]string{}
			for rt, r := range replayers {
				rep, err := r.Replay(ctx, sum.ID, api.ReplayRequest{Execution: execution})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Divergence != nil {
					t.Errorf("%s of %s, execution %d, diverges on %s: %s", sum.ID, sum.Name, execution, rt, rep.Divergence.Message)
				}
				b, _ := json.Marshal(rep)
				reports[rt] = string(b)
			}
			if reports[host.RuntimeWazero] != reports[host.RuntimeWasmtime] {
				t.Errorf("%s of %s, execution %d, replays differently:\nwazero:   %s\nwasmtime: %s", sum.ID, sum.Name, execution, reports[host.RuntimeWazero], reports[host.RuntimeWasmtime])
			}
		}
	}
}

// TestStepBudgetStopsAtTheSamePoint: an endless loop under a step budget
// fails at the same event with the same message live on both runtimes,
// and its replays on both report that failure, byte for byte. The wall
// clock deadline is far away: the budget, not time, stops it.
func TestStepBudgetStopsAtTheSamePoint(t *testing.T) {
	t.Parallel()
	const want = "orchestration crashed applying event 1: it ran past its budget of 1000000 loop iterations for one step, having run 1015808 (an endless loop?)"
	opts := func(runtime string) host.Options {
		return host.Options{Runtime: runtime, StepBudget: 1_000_000, ActivationTimeout: time.Minute}
	}
	for _, rt := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run(rt, func(t *testing.T) {
			h := startHost(t, opts(rt))
			h.deploy(t, "host/testdata/guests/hostile")
			inst := h.run(t, "Loop", `null`)
			if inst.Failure == nil || inst.Failure.Message != want {
				t.Fatalf("status %s, failure %+v; want the failure %q", inst.Status, inst.Failure, want)
			}
			events := h.history(t, inst.ID)
			if last := events[len(events)-1]; len(events) != 2 || last.Kind != engine.OrchestrationFailed {
				t.Fatalf("history %v; want it to fail at the first event", shape(events))
			}
			replayOnBoth(t, h, opts)
		})
	}
}

// TestStepBudgetCountsBulkMemory: a step that copies or clears 32 MiB a
// round, a few loop iterations each (memory.copy and memory.fill), fails by
// its step budget, at the same point live on both runtimes and on every
// replay, long before the wall-clock deadline: the budget counts what a
// bulk instruction does, by its length.
func TestStepBudgetCountsBulkMemory(t *testing.T) {
	t.Parallel()
	const prefix = "orchestration crashed applying event 1: it ran past its budget of 10000000 loop iterations for one step, having run "
	opts := func(runtime string) host.Options {
		return host.Options{Runtime: runtime, StepBudget: 10_000_000, ActivationTimeout: 10 * time.Second, MemoryLimit: 128 << 20}
	}
	for _, orchestration := range []string{"Copy", "Fill"} {
		t.Run(orchestration, func(t *testing.T) {
			failures := map[string]string{}
			for _, rt := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
				h := startHost(t, opts(rt))
				h.deploy(t, "host/testdata/guests/bulk")
				// A million rounds move 32 TB: only the deadline would stop
				// them, were they not counted.
				inst := h.run(t, orchestration, `1000000`)
				if inst.Failure == nil || !strings.HasPrefix(inst.Failure.Message, prefix) {
					t.Fatalf("on %s: status %s, failure %+v; want a failure beginning %q", rt, inst.Status, inst.Failure, prefix)
				}
				failures[rt] = inst.Failure.Message
				replayOnBoth(t, h, opts)
			}
			if a, b := failures[host.RuntimeWazero], failures[host.RuntimeWasmtime]; a != b {
				t.Errorf("the runtimes stopped at different points:\nwazero:   %s\nwasmtime: %s", a, b)
			}
		})
	}
}
