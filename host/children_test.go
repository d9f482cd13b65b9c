package host_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

func TestParentAndChildren(t *testing.T) {
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/parentchild")
	ctx := context.Background()
	id, err := h.Start(ctx, "Parent", []byte(`["books","lamp"]`), "order-1")
	if err != nil {
		t.Fatal(err)
	}
	h.finish(t, id, `"books shipped; lamp shipped"`)
	want := []string{"OrchestrationStarted(Parent)", "SubOrchestrationScheduled(Ship)", "SubOrchestrationScheduled(Ship)",
		"SubOrchestrationCompleted", "SubOrchestrationCompleted", "OrchestrationChained(Audit)", "OrchestrationCompleted"}
	events := h.history(t, id)
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
	for _, c := range []struct{ id, want string }{{"order-1:2", `"books shipped"`}, {"order-1:3", `"lamp shipped"`}, {"order-1:6", `"audited an order of 2 parcels"`}} {
		h.finish(t, c.id, c.want)
	}

	lost, err := h.Start(ctx, "Parent", []byte(`["books","lost"]`), "order-2")
	if err != nil {
		t.Fatal(err)
	}
	inst := h.wait(t, lost)
	const wantFailure = `child orchestration "Ship" failed: activity "Dispatch" failed: parcel "lost" cannot be found`
	if inst.Status != engine.StatusFailed || inst.Failure.Message != wantFailure {
		t.Fatalf("status %s failure %+v", inst.Status, inst.Failure)
	}
}
