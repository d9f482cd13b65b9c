package storetest

import (
	"slices"

	"github.com/durabox/durabox/store"
)

// otherModule is a second module, whose work testSkipModules passes over.
const otherModule = "f00d"

// testSkipModules: a host that cannot run a module passes over its work:
// LockNextInstances and LockNextActivities with the module's hash in skip
// leave its instances and tasks where they are, neither locked nor
// counted, and serve the others as if they were not there, older or not;
// a call without the hash then hands them out as first deliveries.
func testSkipModules(f *fixture) {
	f.must(f.s.PutModule(f.ctx, store.Module{Hash: otherModule, Wasm: []byte("\x00asm 2"), Orchestrations: []string{orchestration}, Activities: []string{"Refund"}, DeployedAt: t0}), "PutModule")
	createOn := func(id, hash string) {
		f.t.Helper()
		f.must(f.s.CreateInstance(f.ctx, store.NewInstance{ID: id, Name: orchestration, ModuleHash: hash, Input: input(id), Now: t0}), "CreateInstance "+id)
	}
	createOn("o1", otherModule)
	createOn("i1", module)
	createOn("o2", otherModule)
	skip := []string{otherModule}
	// lockAll locks up to 5 instances, and checks they are want, each
	// delivered for the first time.
	lockAll := func(when string, skip []string, want ...string) []*store.WorkItem {
		f.t.Helper()
		items, err := f.s.LockNextInstances(f.ctx, t0, lease, 5, skip)
		f.must(err, "LockNextInstances")
		var got []string
		for _, item := range items {
			got = append(got, item.Instance.ID)
			if item.Attempt != 1 {
				f.t.Errorf("%s: %s delivered with Attempt %d; want 1, its first delivery", when, item.Instance.ID, item.Attempt)
			}
		}
		if !slices.Equal(got, want) {
			f.t.Fatalf("LockNextInstances %s, skipping %q, locked %q; want %q", when, skip, got, want)
		}
		return items
	}

	i1 := lockAll("with three starts", skip, "i1")[0]
	lockAll("with i1 locked", skip)
	f.commit(turn(i1, started("i1", input("i1")), scheduled("Charge")))
	for _, item := range lockAll("without skipping", nil, "o1", "o2") {
		f.messages(item, started(item.Instance.ID, input(item.Instance.ID)))
		if item.Instance.ID == "o1" {
			f.commit(turn(item, started("o1", input("o1")), scheduled("Refund")))
		} else {
			f.commit(turn(item, started("o2", input("o2"))))
		}
	}

	// An instance that has begun is passed over too, its message older
	// than the one served.
	f.enqueue("o2", raised("Approve"))
	f.enqueue("i1", raised("Approve"))
	f.commit(turn(lockAll("with o2 and i1 raised", skip, "i1")[0], raised("Approve")))
	f.messages(lockAll("without skipping", nil, "o2")[0], raised("Approve"))

	// Activity tasks: o1's Refund, scheduled after i1's Charge, waits.
	ws, err := f.s.LockNextActivities(f.ctx, t0, lease, 5, skip)
	f.must(err, "LockNextActivities")
	if len(ws) != 1 || ws[0].Task.Name != "Charge" {
		f.t.Fatalf("LockNextActivities skipping %q leased %+v; want i1's Charge alone", skip, ws)
	}
	if w := f.lease(t0); w.Task.Name != "Refund" || w.ModuleHash != otherModule || w.Attempt != 1 {
		f.t.Fatalf("LockNextActivities without skipping leased %+v; want o1's Refund, on %s, Attempt 1", w, otherModule)
	}
}
