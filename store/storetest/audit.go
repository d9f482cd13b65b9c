package storetest

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testAudit: audit records are kept as given, with increasing ids, and
// listed newest first; each filter keeps what it names, pages follow one
// another without a gap or a repeat, and DeleteAudit deletes only the
// records older than its time.
func testAudit(f *fixture) {
	recs := []store.AuditRecord{
		{Time: t0, Token: "alice", Role: "admin", Action: "deploy", Target: module, Status: 201, Outcome: "ok"},
		{Time: t0.Add(time.Minute), Token: "alice", Role: "admin", Action: "start", Target: "i1", Status: 201, Outcome: "ok", Detail: `orchestration "Order"`},
		{Time: t0.Add(2 * time.Minute), Token: "bob", Role: "read", Action: "cancel", Target: "i1", Status: 403, Outcome: "refused", Detail: "this token may only read"},
		{Time: t0.Add(3 * time.Minute), Token: "alice", Role: "admin", Action: "cancel", Target: "i1", Status: 202, Outcome: "ok", Detail: "reason: ≠ done"},
	}
	for i := range recs {
		id, err := f.s.AppendAudit(f.ctx, recs[i])
		f.must(err, "AppendAudit")
		if i > 0 && id <= recs[i-1].ID {
			f.t.Fatalf("AppendAudit: id %d after %d; want a greater one", id, recs[i-1].ID)
		}
		recs[i].ID = id
	}
	list := func(q store.AuditQuery) store.AuditPage {
		f.t.Helper()
		page, err := f.s.ListAudit(f.ctx, q)
		f.must(err, "ListAudit")
		return page
	}
	want := func(q store.AuditQuery, idx ...int) {
		f.t.Helper()
		var w []store.AuditRecord
		for _, i := range idx {
			w = append(w, recs[i])
		}
		if got := list(q).Records; !reflect.DeepEqual(got, w) {
			f.t.Fatalf("ListAudit(%+v):\n%+v\nwant\n%+v", q, got, w)
		}
	}
	want(store.AuditQuery{}, 3, 2, 1, 0)
	want(store.AuditQuery{Token: "alice"}, 3, 1, 0)
	want(store.AuditQuery{Action: "cancel"}, 3, 2)
	want(store.AuditQuery{Target: "i1", Token: "bob"}, 2)
	want(store.AuditQuery{Since: t0.Add(2 * time.Minute)}, 3, 2)
	want(store.AuditQuery{Token: "carol"})

	first := list(store.AuditQuery{Limit: 3})
	if len(first.Records) != 3 || first.Next != recs[1].ID {
		f.t.Fatalf("ListAudit, a page of 3 of 4: %d records, next %d; want 3, next %d", len(first.Records), first.Next, recs[1].ID)
	}
	second := list(store.AuditQuery{Limit: 3, Before: first.Next})
	if len(second.Records) != 1 || second.Records[0].ID != recs[0].ID || second.Next != 0 {
		f.t.Fatalf("ListAudit, the page after: %+v; want the first record alone, and no next", second)
	}

	n, err := f.s.DeleteAudit(f.ctx, t0.Add(2*time.Minute))
	f.must(err, "DeleteAudit")
	if n != 2 {
		f.t.Fatalf("DeleteAudit: %d deleted; want 2", n)
	}
	want(store.AuditQuery{}, 3, 2)
}

// testAuditWithChange: the audit record of a change (store.NewInstance's
// Audit, Enqueue's and EnqueuePersistent's audit) is stored with it, as
// given, with an ID after the records before it: by CreateInstance, by
// CreateWithEvent when it creates the instance, by a store.Handoff's
// CreateLocked and CreateAndTurn, by Enqueue and by EnqueuePersistent. A change refused (an
// id taken, an instance absent or finished, one persistent event too
// many) stores none, nor does CreateWithEvent when it only raises the
// event at the instance there.
func testAuditWithChange(f *fixture) {
	deploy := store.AuditRecord{Time: t0, Token: "alice", Role: "admin", Action: "deploy", Target: module, Status: 201, Outcome: "ok"}
	id, err := f.s.AppendAudit(f.ctx, deploy)
	f.must(err, "AppendAudit")
	deploy.ID = id
	record := func(action, id string) *store.AuditRecord {
		return &store.AuditRecord{Time: t0.Add(time.Second), Token: "bob", Role: "admin", Action: action, Target: id, Status: 201, Outcome: "ok", Detail: action + " " + id}
	}
	var want []*store.AuditRecord
	start := func(id string) store.NewInstance {
		return store.NewInstance{ID: id, Name: orchestration, ModuleHash: module, Input: input(id), Now: t0, Audit: record("start", id)}
	}
	f.must(f.s.CreateInstance(f.ctx, start("i1")), "CreateInstance with an audit record")
	f.wantErr(f.s.CreateInstance(f.ctx, start("i1")), store.ErrInstanceExists, "CreateInstance of a taken id, with an audit record")
	want = append(want, record("start", "i1"))
	for _, created := range []bool{true, false} {
		got, err := f.s.CreateWithEvent(f.ctx, start("i2"), raised("Go"), 0)
		if err != nil || got != created {
			f.t.Fatalf("CreateWithEvent of i2 with an audit record: %v, %v; want created %v", got, err, created)
		}
	}
	want = append(want, record("start", "i2"))
	if h, ok := f.s.(store.Handoff); ok {
		_, err := h.CreateLocked(f.ctx, start("i3"), lease)
		f.must(err, "CreateLocked with an audit record")
		_, err = h.CreateLocked(f.ctx, start("i3"), lease)
		f.wantErr(err, store.ErrInstanceExists, "CreateLocked of a taken id, with an audit record")
		want = append(want, record("start", "i3"))
		first := func(it *store.WorkItem) (*store.TurnCommit, int) {
			c := turn(it, started(it.Instance.ID, input(it.Instance.ID)))
			return &c, 0
		}
		_, _, err = h.CreateAndTurn(f.ctx, start("i4"), lease, first)
		f.must(err, "CreateAndTurn with an audit record")
		_, _, err = h.CreateAndTurn(f.ctx, start("i4"), lease, first)
		f.wantErr(err, store.ErrInstanceExists, "CreateAndTurn of a taken id, with an audit record")
		want = append(want, record("start", "i4"))
	}
	f.must(f.s.Enqueue(f.ctx, "i1", raised("Approve"), t0, record("raise", "i1")), "Enqueue with an audit record")
	f.must(f.s.EnqueuePersistent(f.ctx, "i1", persistent("Note"), 1, t0, record("note", "i1")), "EnqueuePersistent with an audit record")
	want = append(want, record("raise", "i1"), record("note", "i1"))
	f.wantErr(f.s.EnqueuePersistent(f.ctx, "i1", persistent("Note"), 1, t0, record("refused", "i1")), store.ErrTooManyEvents, "EnqueuePersistent past its max, with an audit record")
	f.wantErr(f.s.Enqueue(f.ctx, "absent", raised("Approve"), t0, record("refused", "absent")), store.ErrNotFound, "Enqueue for an absent instance, with an audit record")
	f.create("done")
	f.finish("done", engine.StatusCompleted, completed(`"done"`), t0)
	f.wantErr(f.s.Enqueue(f.ctx, "done", raised("Approve"), t0, record("refused", "done")), store.ErrFinished, "Enqueue for a finished instance, with an audit record")

	page, err := f.s.ListAudit(f.ctx, store.AuditQuery{})
	f.must(err, "ListAudit")
	got := page.Records
	slices.Reverse(got)
	if len(got) != len(want)+1 || !reflect.DeepEqual(got[0], deploy) {
		f.t.Fatalf("the audit log after a deploy, then %d changes made with their records and several refused:\n%+v\nwant the deploy's record, then one for each change made", len(want), got)
	}
	for i, w := range want {
		w.ID = got[i+1].ID
		if got[i+1] != *w || w.ID <= got[i].ID {
			f.t.Fatalf("the audit record of %s: %+v; want %+v with an ID above %d", w.Detail, got[i+1], *w, got[i].ID)
		}
	}
}

// Observed is what a store's Options.OnCommit was told, gathered for
// CommitsOfAudit.
type Observed struct {
	mu      sync.Mutex
	commits []store.CommitStats
}

// OnCommit is the function to give the store's Options.OnCommit.
func (o *Observed) OnCommit(c store.CommitStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commits = append(o.commits, c)
}

// since returns the commits observed after the first n.
func (o *Observed) since(n int) []store.CommitStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.commits[n:])
}

// CommitsOfAudit checks that an audit record commits without a sync of
// its own (it is written after the change it records was answered, and a
// sync would put a second one on the path of every update), and that a
// change (a module's deploy) still commits synced. s must be new, with
// o.OnCommit as its observer.
func CommitsOfAudit(t *testing.T, s store.Store, o *Observed) {
	t.Helper()
	ctx := context.Background()
	n := len(o.since(0))
	if err := s.PutModule(ctx, store.Module{Hash: module, Wasm: []byte("w"), Orchestrations: []string{"O"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(ctx, store.AuditRecord{Time: t0, Token: "alice", Role: "admin", Action: "deploy", Target: module, Status: 201, Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	got := o.since(n)
	if len(got) != 2 || got[0].Unsynced || !got[1].Unsynced {
		t.Fatalf("a deploy then its audit record committed as %+v; want two commits, the deploy's synced and the record's unsynced", got)
	}
}
