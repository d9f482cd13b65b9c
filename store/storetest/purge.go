package storetest

import (
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testPurge: purging a finished instance deletes it with every execution's
// history, its messages (timers too) and its activity tasks, and frees its
// id.
func testPurge(f *fixture) {
	ends := []struct {
		id     string
		status engine.Status
		end    engine.Event
	}{
		{"completed", engine.StatusCompleted, completed(`"done"`)},
		{"failed", engine.StatusFailed, failed("broke")},
		{"canceled", engine.StatusCanceled, failed("canceled")},
		{"terminated", engine.StatusTerminated, engine.Event{Kind: engine.OrchestrationTerminated, Reason: "stop"}},
	}
	later := t0.Add(2 * time.Hour)
	for _, e := range ends {
		// Execution 1 leaves a task and a timer due in an hour; execution 2
		// a task, and ends.
		f.create(e.id)
		f.run(e.id, t0, started(e.id, input(e.id)), scheduled("Charge"), timerCreated(t0.Add(time.Hour)))
		f.enqueue(e.id, raised("Next"))
		f.continueAsNew(f.lockID(t0, e.id))
		c := turn(f.lockID(t0, e.id), started(e.id, nextInput), persistent("kept"), scheduled("Charge"), e.end)
		c.Status = e.status
		// A message that arrives while the last turn runs is left.
		f.enqueue(e.id, raised("After"))
		f.commit(c)
		f.must(f.s.Purge(f.ctx, e.id), "Purge of a "+string(e.status)+" instance")
		_, err := f.s.GetInstance(f.ctx, e.id)
		f.wantErr(err, store.ErrNotFound, "GetInstance of a purged instance")
		for execution := range int64(3) {
			_, err = f.s.History(f.ctx, e.id, execution)
			f.wantErr(err, store.ErrNotFound, "History of a purged instance")
		}
		f.wantErr(f.s.Purge(f.ctx, e.id), store.ErrNotFound, "a second Purge")
	}
	if all := f.list(store.InstanceFilter{}); len(all) != 0 {
		f.t.Fatalf("ListInstances after purging every instance = %q; want none", all)
	}
	if names := f.activities(later); len(names) != 0 {
		f.t.Fatalf("activity tasks of purged instances handed out: %q; want none", names)
	}
	for _, e := range ends {
		f.create(e.id)
		item := f.lockID(later, e.id)
		if item.HistoryLen != 0 || item.Instance.ExecutionID != 1 {
			f.t.Fatalf("instance %s created again: HistoryLen %d, execution %d; want 0, 1", e.id, item.HistoryLen, item.Instance.ExecutionID)
		}
		f.messages(item, started(e.id, input(e.id)))
		f.history(e.id, 1, nil)
		_, err := f.s.History(f.ctx, e.id, 2)
		f.wantErr(err, store.ErrNotFound, "History of the second execution of the first instance of that id")
	}
}

// testPurgeRefused: an instance that has not finished is not purged, and
// nor is one that does not exist.
func testPurgeRefused(f *fixture) {
	f.wantErr(f.s.Purge(f.ctx, "absent"), store.ErrNotFound, "Purge of an instance that does not exist")
	f.create("pending")
	f.create("running")
	first := f.run("running", t0, started("running", input("running")), scheduled("Charge"))
	f.enqueue("running", raised("Approve"))
	locked := f.lockID(t0, "running")
	for _, id := range []string{"pending", "running"} {
		f.wantErr(f.s.Purge(f.ctx, id), store.ErrNotFinished, "Purge of a "+id+" instance")
	}
	f.commit(turn(locked, raised("Approve")))
	f.history("running", 1, append(slices.Clone(first), turn(locked, raised("Approve")).NewEvents...))
	f.messages(f.lockID(t0, "pending"), started("pending", input("pending")))
	if names := f.activities(t0); !slices.Equal(names, []string{"Charge"}) {
		f.t.Fatalf("activity tasks after a refused purge: %q; want [Charge]", names)
	}
}

// testPurgedParent: the children of a purged instance live on, and do not
// report to a new instance that takes its id.
func testPurgedParent(f *fixture) {
	f.commit(f.withChild(completed(`"p"`)))
	f.must(f.s.Purge(f.ctx, "p"), "Purge of the parent")
	f.create("p")
	f.run("p:2", t0, started("p:2", input("p:2")), completed(`"two"`))
	f.messages(f.lockID(t0, "p"), started("p", input("p")))
}
