package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"time"

	"github.com/durabox/durabox/store"
)

// testBatches: a batch holds the ids of the instances its filter selected
// when it was created, and only those, in the order of their ids; one
// runner holds it at a time (another takes it once the lease ends, or at
// once when released); a step is recorded only by its holder, at the
// instance the runner read, so that a step taken twice, or by a runner
// that lost the batch, changes nothing; the last step completes it, and a
// stopped batch takes no more steps.
func testBatches(f *fixture) {
	f.population()
	created := store.Batch{Action: "cancel", Args: json.RawMessage(`{"reason":"r"}`), Filter: "name=Order", By: "alice", Rate: 2.5, CreatedAt: t0}
	b, err := f.s.CreateBatch(f.ctx, created, store.InstanceFilter{Name: orchestration, Statuses: store.Unfinished})
	f.must(err, "CreateBatch")
	if b.ID < 1 || b.Matched != 3 || b.State != store.BatchRunning {
		f.t.Fatalf("CreateBatch: %+v; want an ID, 3 matched (a2, a2:2, a3), running", b)
	}
	// An instance created afterwards is not among its items.
	f.createAt("a4", orchestration, module, t0.Add(3*time.Minute))
	got, err := f.s.GetBatch(f.ctx, b.ID)
	f.must(err, "GetBatch")
	want := created
	want.ID, want.Matched, want.State, want.UpdatedAt = b.ID, 3, store.BatchRunning, t0
	if !reflect.DeepEqual(got, want) {
		f.t.Fatalf("GetBatch:\n%+v\nwant\n%+v", got, want)
	}
	_, err = f.s.GetBatch(f.ctx, b.ID+100)
	f.wantErr(err, store.ErrNotFound, "GetBatch of no batch")

	items := func(after string, taken bool) []store.BatchItem {
		f.t.Helper()
		its, err := f.s.BatchItems(f.ctx, b.ID, after, 10, taken)
		f.must(err, "BatchItems")
		return its
	}
	if its := items("", false); !reflect.DeepEqual(its, []store.BatchItem{{InstanceID: "a2"}, {InstanceID: "a2:2"}, {InstanceID: "a3"}}) {
		f.t.Fatalf("BatchItems: %+v; want a2, a2:2, a3, none taken", its)
	}
	if its := items("a2", false); len(its) != 2 || its[0].InstanceID != "a2:2" {
		f.t.Fatalf("BatchItems after a2: %+v; want a2:2, a3", its)
	}

	claim := func(owner string, now time.Time) []int64 {
		f.t.Helper()
		bs, err := f.s.ClaimBatches(f.ctx, owner, now, lease)
		f.must(err, "ClaimBatches")
		var ids []int64
		for _, b := range bs {
			ids = append(ids, b.ID)
		}
		return ids
	}
	if ids := claim("h1", t0); len(ids) != 1 || ids[0] != b.ID {
		f.t.Fatalf("h1 claims %v; want batch %d", ids, b.ID)
	}
	if ids := claim("h2", t0.Add(lease/2)); len(ids) != 0 {
		f.t.Fatalf("h2 claims %v while h1 holds it; want none", ids)
	}
	if ids := claim("h1", t0.Add(lease/2)); len(ids) != 1 {
		f.t.Fatalf("h1 claims %v again; want its batch, its lease extended", ids)
	}
	step := func(owner, after, instance string, outcome store.ItemOutcome, detail string) error {
		return f.s.StepBatch(f.ctx, store.BatchStep{ID: b.ID, Owner: owner, After: after, Instance: instance, Outcome: outcome, Detail: detail,
			Now: t0.Add(time.Minute), LeaseUntil: t0.Add(2 * lease)})
	}
	f.must(step("h1", "", "a2", store.ItemDone, ""), "StepBatch a2")
	f.wantErr(step("h1", "", "a2", store.ItemDone, ""), store.ErrLeaseLost, "StepBatch a2 again")
	f.wantErr(step("h2", "a2", "a2:2", store.ItemDone, ""), store.ErrLeaseLost, "StepBatch by a runner that does not hold it")
	// h1's lease, which its claim extended to t0+lease/2+lease and its
	// step to t0+2*lease, holds, then ends; h2 takes the batch over.
	if ids := claim("h2", t0.Add(lease/2+lease+time.Second)); len(ids) != 0 {
		f.t.Fatalf("h2 claims %v before the lease h1's step extended ends; want none", ids)
	}
	if ids := claim("h2", t0.Add(2*lease+time.Second)); len(ids) != 1 {
		f.t.Fatalf("h2 claims %v once h1's lease ended; want the batch", ids)
	}
	f.wantErr(step("h1", "a2", "a2:2", store.ItemDone, ""), store.ErrLeaseLost, "StepBatch by the runner that lost it")
	f.must(step("h2", "a2", "a2:2", store.ItemFailed, "it said no"), "StepBatch a2:2")
	f.must(f.s.ReleaseBatches(f.ctx, "h2"), "ReleaseBatches")
	if ids := claim("h1", t0.Add(2*lease+time.Second)); len(ids) != 1 {
		f.t.Fatalf("h1 claims %v once h2 released it; want the batch", ids)
	}
	f.must(step("h1", "a2:2", "a3", store.ItemSkipped, "finished"), "StepBatch a3")
	if its := items("", true); !reflect.DeepEqual(its, []store.BatchItem{{InstanceID: "a2", Outcome: store.ItemDone}, {InstanceID: "a2:2", Outcome: store.ItemFailed, Detail: "it said no"}, {InstanceID: "a3", Outcome: store.ItemSkipped, Detail: "finished"}}) {
		f.t.Fatalf("BatchItems taken: %+v", its)
	}
	f.must(step("h1", "a3", "", "", ""), "StepBatch: the end")
	got, err = f.s.GetBatch(f.ctx, b.ID)
	f.must(err, "GetBatch")
	if got.State != store.BatchCompleted || got.Done != 1 || got.Failed != 1 || got.Skipped != 1 || got.LastInstance != "a3" || got.LastError != "it said no" {
		f.t.Fatalf("the batch at its end: %+v; want completed, 1 done, 1 failed, 1 skipped, at a3, its last error kept", got)
	}
	if ids := claim("h1", t0.Add(2*lease)); len(ids) != 0 {
		f.t.Fatalf("a completed batch is claimed: %v", ids)
	}
	f.wantErr(f.s.StopBatch(f.ctx, b.ID, t0), store.ErrFinished, "StopBatch of a completed batch")
	f.wantErr(f.s.StopBatch(f.ctx, b.ID+100, t0), store.ErrNotFound, "StopBatch of no batch")

	// A second batch, of every instance, stopped after its first step.
	b2, err := f.s.CreateBatch(f.ctx, store.Batch{Action: "terminate", Filter: "", CreatedAt: t0.Add(time.Hour)}, store.InstanceFilter{})
	f.must(err, "CreateBatch of every instance")
	if b2.Matched != 6 || b2.ID <= b.ID {
		f.t.Fatalf("the second batch: %+v; want 6 matched and a greater ID than %d", b2, b.ID)
	}
	claim("h1", t0.Add(time.Hour))
	b = b2
	f.must(step("h1", "", "a1", store.ItemSkipped, ""), "StepBatch a1")
	f.must(f.s.StopBatch(f.ctx, b2.ID, t0.Add(time.Hour)), "StopBatch")
	f.wantErr(step("h1", "a1", "a2", store.ItemDone, ""), store.ErrLeaseLost, "StepBatch of a stopped batch")
	if ids := claim("h1", t0.Add(time.Hour)); len(ids) != 0 {
		f.t.Fatalf("a stopped batch is claimed: %v", ids)
	}
	all, err := f.s.ListBatches(f.ctx, 10)
	f.must(err, "ListBatches")
	if len(all) != 2 || all[0].ID != b2.ID || all[0].State != store.BatchStopped || all[0].Done+all[0].Skipped != 1 || string(all[0].Args) != "null" {
		f.t.Fatalf("ListBatches: %+v; want the stopped one (one taken, args null), then the first", all)
	}
}

// testDeleteBatches: DeleteBatches deletes the batches that ended
// (completed or stopped) before its time, those that ended first first,
// up to its max, each with its items; a running batch stays however old,
// and so does one that ended since.
func testDeleteBatches(f *fixture) {
	f.population()
	create := func() store.Batch {
		f.t.Helper()
		b, err := f.s.CreateBatch(f.ctx, store.Batch{Action: "cancel", Filter: "name=Order", By: "alice", CreatedAt: t0}, store.InstanceFilter{Name: orchestration})
		f.must(err, "CreateBatch")
		return b
	}
	// stopped ends at t0+1m, completed at t0+2m, later at t0+1h; running,
	// as old as they, never.
	running, stopped, completed, later := create(), create(), create(), create()
	f.must(f.s.StopBatch(f.ctx, stopped.ID, t0.Add(time.Minute)), "StopBatch")
	claimed, err := f.s.ClaimBatches(f.ctx, "h1", t0, lease)
	f.must(err, "ClaimBatches")
	if len(claimed) != 3 {
		f.t.Fatalf("ClaimBatches: %d batches; want the 3 running", len(claimed))
	}
	f.must(f.s.StepBatch(f.ctx, store.BatchStep{ID: completed.ID, Owner: "h1", Now: t0.Add(2 * time.Minute)}), "StepBatch: the end")
	f.must(f.s.StopBatch(f.ctx, later.ID, t0.Add(time.Hour)), "StopBatch")
	kept := func(want ...store.Batch) {
		f.t.Helper()
		for _, b := range []store.Batch{running, stopped, completed, later} {
			wantKept := slices.ContainsFunc(want, func(w store.Batch) bool { return w.ID == b.ID })
			_, err := f.s.GetBatch(f.ctx, b.ID)
			its, itemsErr := f.s.BatchItems(f.ctx, b.ID, "", 10, false)
			f.must(itemsErr, "BatchItems")
			switch {
			case wantKept && (err != nil || int64(len(its)) != b.Matched):
				f.t.Fatalf("batch %d: %v, %d items; want it kept with its %d", b.ID, err, len(its), b.Matched)
			case !wantKept && (!errors.Is(err, store.ErrNotFound) || len(its) != 0):
				f.t.Fatalf("batch %d: %v, %d items; want it deleted with its items", b.ID, err, len(its))
			}
		}
	}
	deleted := func(before time.Time, max, want int) {
		f.t.Helper()
		n, err := f.s.DeleteBatches(f.ctx, before, max)
		f.must(err, "DeleteBatches")
		if n != want {
			f.t.Fatalf("DeleteBatches(%s, %d): %d deleted; want %d", before.Sub(t0), max, n, want)
		}
	}
	deleted(t0.Add(time.Minute), 10, 0)
	kept(running, stopped, completed, later)
	deleted(t0.Add(30*time.Minute), 1, 1)
	kept(running, completed, later)
	deleted(t0.Add(30*time.Minute), 10, 1)
	kept(running, later)
	deleted(t0.Add(30*time.Minute), 10, 0)
	deleted(t0.Add(48*time.Hour), 10, 1)
	kept(running)
	if _, err := f.s.DeleteBatches(f.ctx, t0.Add(48*time.Hour), 0); err == nil {
		f.t.Fatal("DeleteBatches of at most 0 batches: no error")
	}
}
