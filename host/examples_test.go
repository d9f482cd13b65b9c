package host_test

import (
	"context"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

func TestApprovalExample(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/approval")
	approved := h.start(t, "Approval", `{"item": "laptop", "timeout": "1h"}`)
	h.until(t, approved, "the wait", has(1, engine.ExternalSubscribed))
	if inst, err := h.Instance(context.Background(), approved); err != nil || inst.CustomStatus != "waiting for a decision on laptop" {
		t.Fatalf("custom status %q, %v", inst.CustomStatus, err)
	}
	if err := h.Raise(context.Background(), approved, "Approval", []byte(`{"approved": true, "by": "ada"}`), false); err != nil {
		t.Fatal(err)
	}
	h.finish(t, approved, `"laptop approved by ada"`)

	expired := h.start(t, "Approval", `{"item": "chair", "timeout": "100ms"}`)
	h.finish(t, expired, `"chair: no decision in 100ms, request expired"`)
	if n := count(h.history(t, expired), engine.ExternalSubscribedCancelled); n != 1 {
		t.Fatalf("%d cancelled waits, want 1", n)
	}
}

func TestFanOutExample(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/fanout")
	id := h.start(t, "WordCount", `["one two three four five six seven eight", "nine ten", "eleven"]`)
	events := h.finish(t, id, `11`)
	if n := count(events, engine.ActivityScheduled); n != 3 {
		t.Fatalf("%d activities, want 3", n)
	}
}

func TestEternalExample(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/eternal")
	id := h.start(t, "Heartbeat", `{"every": "10ms", "rounds": 3}`)
	h.finish(t, id, `"stopped after 3 rounds"`)
	if inst := h.wait(t, id); inst.ExecutionID != 3 {
		t.Fatalf("execution %d, want 3", inst.ExecutionID)
	}
	for execution, last := range map[int64]engine.EventKind{1: engine.OrchestrationContinuedAsNew, 2: engine.OrchestrationContinuedAsNew, 3: engine.OrchestrationCompleted} {
		events, err := h.ExecutionHistory(context.Background(), id, execution)
		if err != nil || len(events) == 0 || events[len(events)-1].Kind != last {
			t.Fatalf("execution %d: %v, %v", execution, shape(events), err)
		}
	}
}
