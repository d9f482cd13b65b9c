package storetest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// list lists the instances filter selects, a page of two at a time, and
// returns their ids in the order listed. It fails the test if a page is
// longer than asked or the listing does not end.
func (f *fixture) list(filter store.InstanceFilter) []string {
	f.t.Helper()
	var ids []string
	q := store.InstanceQuery{Filter: filter, Limit: 2}
	for pages := 0; ; pages++ {
		page, err := f.s.ListInstances(f.ctx, q)
		f.must(err, "ListInstances")
		if len(page.Instances) > q.Limit || pages > 100 {
			f.t.Fatalf("ListInstances page %d has %d instances with a limit of %d", pages, len(page.Instances), q.Limit)
		}
		for _, i := range page.Instances {
			ids = append(ids, i.ID)
		}
		if page.Next == "" {
			return ids
		}
		q.After = page.Next
	}
}

// createAt creates instance id of orchestration name on module hash at
// time at.
func (f *fixture) createAt(id, name, hash string, at time.Time) {
	f.t.Helper()
	f.must(f.s.CreateInstance(f.ctx, store.NewInstance{ID: id, Name: name, ModuleHash: hash, Input: input(id), Now: at}), "CreateInstance "+id)
}

// population deploys module "f00d" (Refund) and makes these instances,
// newest first:
//
//	b1    Refund on f00d, created at t0+2m, Pending
//	a3    Order, created at t0+2m (after b1), Pending
//	a2:2  Order, a2's child, created at t0+1m+2s, Pending
//	a2    Order, created at t0+1m, Running
//	a1    Order, created at t0, Completed at t0+2s
func (f *fixture) population() {
	f.t.Helper()
	f.must(f.s.PutModule(f.ctx, store.Module{Hash: "f00d", Wasm: []byte("\x00asm 2"), Orchestrations: []string{"Refund"}, DeployedAt: t0}), "PutModule")
	f.createAt("a1", orchestration, module, t0)
	f.run("a1", t0, started("a1", input("a1")), completed(`"one"`))
	f.createAt("a2", orchestration, module, t0.Add(time.Minute))
	c := turn(f.lockID(t0.Add(time.Minute), "a2"), started("a2", input("a2")), childScheduled("a2:2"))
	c.Children, c.Now = []store.NewChild{childOf("a2:2", 2, module)}, t0.Add(time.Minute+2*time.Second)
	f.commit(c)
	f.createAt("b1", "Refund", "f00d", t0.Add(2*time.Minute))
	f.createAt("a3", orchestration, module, t0.Add(2*time.Minute))
}

// testListInstances: each filter selects what it says, newest first, and
// pages of any size list the same instances once each.
func testListInstances(f *fixture) {
	f.population()
	all := []string{"a3", "b1", "a2:2", "a2", "a1"}
	tests := []struct {
		name   string
		filter store.InstanceFilter
		want   []string
	}{
		{"everything", store.InstanceFilter{}, all},
		{"a status", store.InstanceFilter{Statuses: []engine.Status{engine.StatusCompleted}}, []string{"a1"}},
		{"two statuses", store.InstanceFilter{Statuses: []engine.Status{engine.StatusRunning, engine.StatusPending}}, []string{"a3", "b1", "a2:2", "a2"}},
		{"a status none has", store.InstanceFilter{Statuses: []engine.Status{engine.StatusTerminated}}, nil},
		{"an orchestration", store.InstanceFilter{Name: "Refund"}, []string{"b1"}},
		{"a module", store.InstanceFilter{ModuleHash: module}, []string{"a3", "a2:2", "a2", "a1"}},
		{"an id prefix", store.InstanceFilter{IDPrefix: "a2"}, []string{"a2:2", "a2"}},
		{"an id prefix none has", store.InstanceFilter{IDPrefix: "a2:3"}, nil},
		{"a parent", store.InstanceFilter{ParentID: "a2"}, []string{"a2:2"}},
		{"created from", store.InstanceFilter{CreatedAfter: t0.Add(time.Minute)}, []string{"a3", "b1", "a2:2", "a2"}},
		{"created before", store.InstanceFilter{CreatedBefore: t0.Add(time.Minute)}, []string{"a1"}},
		{"created between", store.InstanceFilter{CreatedAfter: t0.Add(time.Second), CreatedBefore: t0.Add(2 * time.Minute)}, []string{"a2:2", "a2"}},
		{"finished before it finished", store.InstanceFilter{FinishedBefore: t0.Add(2 * time.Second)}, nil},
		{"finished before", store.InstanceFilter{FinishedBefore: t0.Add(3 * time.Second)}, []string{"a1"}},
		{"everything at once", store.InstanceFilter{Statuses: []engine.Status{engine.StatusPending}, Name: orchestration, ModuleHash: module,
			IDPrefix: "a", CreatedAfter: t0.Add(time.Minute), CreatedBefore: t0.Add(3 * time.Minute)}, []string{"a3", "a2:2"}},
	}
	for _, tt := range tests {
		if got := f.list(tt.filter); !slices.Equal(got, tt.want) {
			f.t.Fatalf("%s: ListInstances = %q; want %q", tt.name, got, tt.want)
		}
	}
	for limit := 1; limit <= len(all)+1; limit++ {
		var got []string
		q := store.InstanceQuery{Limit: limit}
		for {
			page, err := f.s.ListInstances(f.ctx, q)
			f.must(err, "ListInstances")
			for _, i := range page.Instances {
				got = append(got, i.ID)
			}
			if page.Next == "" {
				break
			}
			q.After = page.Next
		}
		if !slices.Equal(got, all) {
			f.t.Fatalf("ListInstances in pages of %d = %q; want %q", limit, got, all)
		}
	}
	// An instance created while pages are read is newer than every page.
	first, err := f.s.ListInstances(f.ctx, store.InstanceQuery{Limit: 2})
	f.must(err, "ListInstances")
	f.createAt("late", orchestration, module, t0.Add(time.Hour))
	var rest []string
	for q := (store.InstanceQuery{After: first.Next, Limit: 2}); ; {
		page, err := f.s.ListInstances(f.ctx, q)
		f.must(err, "ListInstances")
		for _, i := range page.Instances {
			rest = append(rest, i.ID)
		}
		if q.After = page.Next; q.After == "" {
			break
		}
	}
	if !slices.Equal(rest, all[2:]) {
		f.t.Fatalf("the pages after the first, with an instance created meanwhile: %q; want %q", rest, all[2:])
	}
	page, err := f.s.ListInstances(f.ctx, store.InstanceQuery{Filter: store.InstanceFilter{ParentID: "a2"}, Limit: 10})
	f.must(err, "ListInstances")
	want := store.InstanceSummary{ID: "a2:2", Name: orchestration, ModuleHash: module, ExecutionID: 1, Status: engine.StatusPending, ParentID: "a2",
		CreatedAt: t0.Add(time.Minute + 2*time.Second), UpdatedAt: t0.Add(time.Minute + 2*time.Second)}
	if len(page.Instances) != 1 || !sameSummary(page.Instances[0], want) || page.Next != "" {
		f.t.Fatalf("the child listed: %+v, next %q; want %+v and no next page", page.Instances, page.Next, want)
	}
	if inst := f.instance("a2:2"); inst.ParentID != "a2" || !sameSummary(inst.Summary(), want) {
		f.t.Fatalf("GetInstance of the child: %+v; want parent a2 and the summary %+v", inst, want)
	}
	for _, bad := range []string{"not a cursor", "1.2", first.Next + "x", first.Next[1:]} {
		_, err = f.s.ListInstances(f.ctx, store.InstanceQuery{After: bad, Limit: 1})
		f.wantErr(err, store.ErrBadCursor, fmt.Sprintf("ListInstances after %q, a cursor the store did not make", bad))
	}
}

// sameSummary compares summaries with times as instants.
func sameSummary(a, b store.InstanceSummary) bool {
	same := a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
	a.CreatedAt, a.UpdatedAt, b.CreatedAt, b.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return same && a == b
}

// testCountInstances: instances counted per module and status, of those
// a filter selects.
func testCountInstances(f *fixture) {
	f.population()
	count := func(filter store.InstanceFilter) string {
		counts, err := f.s.CountInstances(f.ctx, filter)
		f.must(err, "CountInstances")
		var b strings.Builder
		for _, c := range counts {
			b.WriteString(c.ModuleHash + " " + string(c.Status) + " " + strings.Repeat("|", c.Count) + "; ")
		}
		return b.String()
	}
	tests := []struct {
		name   string
		filter store.InstanceFilter
		want   string
	}{
		{"everything", store.InstanceFilter{}, module + " Completed |; " + module + " Pending ||; " + module + " Running |; f00d Pending |; "},
		{"an orchestration", store.InstanceFilter{Name: orchestration, Statuses: []engine.Status{engine.StatusPending}}, module + " Pending ||; "},
		{"nothing", store.InstanceFilter{IDPrefix: "z"}, ""},
	}
	for _, tt := range tests {
		if got := count(tt.filter); got != tt.want {
			f.t.Fatalf("%s: CountInstances = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// testExecutions: an instance's executions, each with its length and
// times; a history asked of an execution that does not exist is not
// found, and nor is one no longer kept.
func testExecutions(f *fixture) {
	f.create("i1")
	first := f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"))
	f.enqueue("i1", raised("Next"))
	first = append(first, f.continueAsNew(f.lockID(t0, "i1"))...)
	executions := func(want ...store.Execution) {
		f.t.Helper()
		got, err := f.s.Executions(f.ctx, "i1")
		f.must(err, "Executions")
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			g, w := got[i], want[i]
			same = g.ID == w.ID && g.Events == w.Events && g.StartedAt.Equal(w.StartedAt) && g.EndedAt.Equal(w.EndedAt) && g.End == w.End
		}
		if !same {
			f.t.Fatalf("Executions = %+v; want %+v", got, want)
		}
	}
	ended := store.Execution{ID: 1, Events: 4, StartedAt: first[0].Time, EndedAt: first[3].Time, End: engine.OrchestrationContinuedAsNew}
	executions(ended, store.Execution{ID: 2})
	c := turn(f.lockID(t0, "i1"), started("i1", nextInput), persistent("kept"), completed(`"two"`))
	f.commit(c)
	executions(ended, store.Execution{ID: 2, Events: 3, StartedAt: c.NewEvents[0].Time, EndedAt: c.NewEvents[2].Time, End: engine.OrchestrationCompleted})
	for _, execution := range []int64{3, -1} {
		_, err := f.s.History(f.ctx, "i1", execution)
		f.wantErr(err, store.ErrNotFound, "History of an execution that does not exist")
	}
	_, err := f.s.Executions(f.ctx, "absent")
	f.wantErr(err, store.ErrNotFound, "Executions of an instance that does not exist")
}
