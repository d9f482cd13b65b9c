package host_test

import (
	"context"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/store"
)

// TestBurstDoesNotStarveOthers starts an orchestration that schedules
// 2,000 activities in one turn and, once they are queued, a hello with one
// activity, on a host with two activity workers. The hello completes while
// most of the burst still waits: the store serves the instances' tasks in
// turn, not the burst's whole backlog first. Decided by counting what the
// burst had completed when the hello finished, not by a clock.
func TestBurstDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	const n = 2000
	h := startHost(t, host.Options{ActivityWorkers: 2})
	h.deploy(t, "host/testdata/guests/burst")
	burst := h.start(t, "Burst", "2000")
	h.until(t, burst, "its activities scheduled", has(n, engine.ActivityScheduled))
	hello := h.run(t, "Hello", `"world"`)
	if hello.Status != engine.StatusCompleted || string(hello.Result) != `"Hello, world!"` {
		t.Fatalf("hello: status %s result %s failure %+v", hello.Status, hello.Result, hello.Failure)
	}
	q, err := h.Queue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := count(h.history(t, burst), engine.ActivityCompleted)
	t.Logf("when the hello completed, the burst had %d of its %d activities completed and %d waiting", done, n, q.Activities)
	if done > n/2 {
		t.Errorf("the hello completed after %d of the burst's %d activities; want it served in turn with them, before half", done, n)
	}
	if inst := h.wait(t, burst); inst.Status != engine.StatusCompleted || string(inst.Result) != "2000" {
		t.Errorf("burst: status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
}

// TestChildrenDoNotStarveOthers starts an orchestration that starts 1,000
// children in one turn and, once they are created, a hello with one
// activity. The hello completes while most of the children have not
// begun: the store serves the parent's children's starts in turn with the
// other starts, not all of them first (before, the hello waited for every
// child: issue 35). Decided by counting the children still Pending when
// the hello finished, not by a clock.
func TestChildrenDoNotStarveOthers(t *testing.T) {
	t.Parallel()
	const n = 1000
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/burst")
	parent := h.start(t, "Parent", "1000")
	h.until(t, parent, "its children started", has(n, engine.SubOrchestrationScheduled))
	hello := h.run(t, "Hello", `"world"`)
	if hello.Status != engine.StatusCompleted || string(hello.Result) != `"Hello, world!"` {
		t.Fatalf("hello: status %s result %s failure %+v", hello.Status, hello.Result, hello.Failure)
	}
	counts, err := h.Count(context.Background(), store.InstanceFilter{ParentID: parent, Statuses: []engine.Status{engine.StatusPending}})
	if err != nil {
		t.Fatal(err)
	}
	waiting := 0
	for _, c := range counts {
		waiting += c.Count
	}
	t.Logf("when the hello completed, %d of the parent's %d children had not begun", waiting, n)
	if waiting < n/2 {
		t.Errorf("the hello completed when only %d of the parent's %d children had not begun; want it started in turn with them, before half had", waiting, n)
	}
	if inst := h.wait(t, parent); inst.Status != engine.StatusCompleted || string(inst.Result) != "1000" {
		t.Errorf("parent: status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
}
