package host_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

func TestCancelAnInstanceAndItsChildren(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	ctx := context.Background()
	id, err := h.Start(ctx, "CancelMe", nil, "job")
	if err != nil {
		t.Fatal(err)
	}
	h.until(t, "job~1:2", "the child's timer", has(1, engine.TimerCreated))
	if err := h.Cancel(ctx, id, "withdrawn"); err != nil {
		t.Fatal(err)
	}
	parent := h.wait(t, id)
	if parent.Status != engine.StatusCanceled || parent.Failure.Message != "durabox: the instance was cancelled: withdrawn" {
		t.Fatalf("parent: status %s failure %+v", parent.Status, parent.Failure)
	}
	want := []string{"OrchestrationStarted(CancelMe)", "SubOrchestrationScheduled(Sleeper)", "OrchestrationCancelRequested",
		"SubOrchestrationCancelRequested", "ActivityScheduled(Work)", "ActivityCompleted", "OrchestrationCanceled"}
	if got := shape(h.history(t, id)); !reflect.DeepEqual(got, want) {
		t.Fatalf("parent's history %v\nwant %v", got, want)
	}
	child := h.wait(t, "job~1:2")
	if child.Status != engine.StatusCanceled || child.Failure.Message != "durabox: the instance was cancelled: its parent job cancelled it" {
		t.Fatalf("child: status %s failure %+v", child.Status, child.Failure)
	}
	if got := shape(h.history(t, "job~1:2")); !reflect.DeepEqual(got, []string{"OrchestrationStarted(Sleeper)", "TimerCreated", "OrchestrationCancelRequested", "TimerCancelled", "OrchestrationCanceled"}) {
		t.Fatalf("child's history %v", got)
	}
	if err := h.Cancel(ctx, "nope", ""); err == nil || err.Error() != `host: instance not found: "nope"` {
		t.Fatalf("cancel of a missing instance: %v", err)
	}
}
