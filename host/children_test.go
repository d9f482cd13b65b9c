package host_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
)

func TestParentAndChildren(t *testing.T) {
	t.Parallel()
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
	for _, c := range []struct{ id, want string }{{"order-1~1:2", `"books shipped"`}, {"order-1~1:3", `"lamp shipped"`}, {"order-1~1:6", `"audited an order of 2 parcels"`}} {
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

// childIDs returns the ids of the children (attached and detached) events
// start, in order.
func childIDs(events []engine.Event) []string {
	var ids []string
	for _, ev := range events {
		if ev.Kind == engine.SubOrchestrationScheduled || ev.Kind == engine.OrchestrationChained {
			ids = append(ids, ev.InstanceID)
		}
	}
	return ids
}

// checkChildren checks that ids are distinct, and that each is an instance
// that completed with the result want gives it.
func (h *testHost) checkChildren(t *testing.T, ids []string, want map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("child id %q derived twice, in %v", id, ids)
		}
		seen[id] = true
		h.finish(t, id, want[id])
	}
}

// TestChildIDsDifferInEveryExecution: an instance starts a child and a
// detached instance in each of its executions, continuing as new between
// them; each execution's children get ids of their own.
func TestChildIDsDifferInEveryExecution(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/ids")
	ctx := context.Background()
	if _, err := h.Start(ctx, "Rounds", []byte(`3`), "rounds"); err != nil {
		t.Fatal(err)
	}
	h.finish(t, "rounds", `1`)
	var ids []string
	want := map[string]string{}
	for execution := int64(1); execution <= 3; execution++ {
		events, err := h.ExecutionHistory(ctx, "rounds", execution)
		if err != nil {
			t.Fatal(err)
		}
		got := childIDs(events)
		if len(got) != 2 {
			t.Fatalf("execution %d started children %v, want a detached one and an attached one", execution, got)
		}
		n := 4 - execution
		want[got[0]], want[got[1]] = fmt.Sprint(-n), fmt.Sprint(n)
		ids = append(ids, got...)
	}
	h.checkChildren(t, ids, want)
}

// TestChildIDsDifferAfterEveryReset: an instance started a child at its
// first step; resetting it to that step, twice, starts the child again
// each time, with an id of its own; the dry run names what the new
// execution starts, and warns of no id already taken.
func TestChildIDsDifferAfterEveryReset(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/ids")
	ctx := context.Background()
	if _, err := h.Start(ctx, "ChildThenWait", []byte(`7`), "again"); err != nil {
		t.Fatal(err)
	}
	h.until(t, "again", "the wait for go", has(1, engine.ExternalSubscribed))
	ids := childIDs(h.history(t, "again"))
	for execution := int64(2); execution <= 3; execution++ {
		plan, err := h.Reset(ctx, "again", api.ResetRequest{ToEvent: 1, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		next := childIDs(plan.Next)
		if len(next) != 1 || slices.Contains(ids, next[0]) || len(plan.Taken) != 0 {
			t.Fatalf("reset to execution %d: the dry run starts children %v, and warns that %v are taken; children so far %v", execution, next, plan.Taken, ids)
		}
		if _, err := h.Reset(ctx, "again", api.ResetRequest{ToEvent: 1, Execution: plan.Execution, Events: plan.Events}); err != nil {
			t.Fatal(err)
		}
		events := h.until(t, "again", "the wait for go after the reset", func(events []engine.Event) bool {
			return count(events, engine.ExternalSubscribed) == 1 || count(events, engine.OrchestrationFailed) == 1
		})
		got := childIDs(events)
		if len(got) != 1 || got[0] != next[0] {
			t.Fatalf("execution %d started children %v, the dry run said %v; history %v", execution, got, next, shape(events))
		}
		ids = append(ids, got[0])
	}
	if err := h.Raise(ctx, "again", "go", []byte(`"go"`), false); err != nil {
		t.Fatal(err)
	}
	h.finish(t, "again", `"child said 7, then go"`)
	h.checkChildren(t, ids, map[string]string{ids[0]: `7`, ids[1]: `7`, ids[2]: `7`})
}

// TestResetWarnsOfAChildIDTaken: a reset that runs again a step that
// starts a child under an id the orchestration chose, which the child of
// the first run holds: the dry run warns that the new execution cannot
// start it, and the reset goes on as warned.
func TestResetWarnsOfAChildIDTaken(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/ids")
	ctx := context.Background()
	if _, err := h.Start(ctx, "NamedChildThenWait", []byte(`7`), "chosen"); err != nil {
		t.Fatal(err)
	}
	h.until(t, "chosen", "the wait for go", has(1, engine.ExternalSubscribed))
	plan, err := h.Reset(ctx, "chosen", api.ResetRequest{ToEvent: 1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"named-chosen"}; !slices.Equal(plan.Taken, want) {
		t.Fatalf("the dry run warns that %v are taken, want %v", plan.Taken, want)
	}
}
