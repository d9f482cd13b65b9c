package storetest

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testUpdates: an update is recorded with its message once per id (a
// request again with its id gets the first record, and enqueues nothing);
// a commit makes it Accepted, then answers it, or records its refusal
// (consuming only its message); an ended execution answers those it left;
// update with start creates the instance first; purge removes them.
func testUpdates(f *fixture) {
	request := func(start *store.NewInstance, id, updateID string) (store.Update, bool, error) {
		return f.s.RequestUpdate(f.ctx, start, id, store.Update{ID: updateID, Name: "Add", Input: json.RawMessage(`1`)}, t0)
	}
	state := func(id, updateID string, want store.UpdateState) store.Update {
		f.t.Helper()
		u, err := f.s.GetUpdate(f.ctx, id, updateID)
		f.must(err, "GetUpdate "+updateID)
		if u.State != want || u.Name != "Add" || string(u.Input) != `1` || !u.RequestedAt.Equal(t0) {
			f.t.Fatalf("update %s of %s: %+v; want %s, Add(1) requested at t0", updateID, id, u, want)
		}
		return u
	}
	_, _, err := request(nil, "absent", "u1")
	f.wantErr(err, store.ErrNotFound, "RequestUpdate of an instance that does not exist")
	_, err = f.s.GetUpdate(f.ctx, "absent", "u1")
	f.wantErr(err, store.ErrNotFound, "GetUpdate of an update never requested")

	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")))
	for _, id := range []string{"u1", "u1", "u2", "u3"} {
		u, started, err := request(nil, "i1", id)
		f.must(err, "RequestUpdate "+id)
		if started || u.State != store.UpdateRequested || u.ID != id {
			f.t.Fatalf("RequestUpdate %s: %+v, started %v; want it Requested", id, u, started)
		}
	}
	item := f.lockID(t0.Add(time.Second), "i1")
	u1, u2, u3 := engine.UpdateRequest("u1", "Add", json.RawMessage(`1`)), engine.UpdateRequest("u2", "Add", json.RawMessage(`1`)), engine.UpdateRequest("u3", "Add", json.RawMessage(`1`))
	f.messages(item, u1, u2, u3)

	// The orchestration refuses u2: only its message is consumed, and the
	// instance is as it was.
	refusal := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0.Add(2 * time.Second), Status: engine.StatusRunning,
		Consumed: []int64{item.Messages[1].ID}, Refused: &store.RefusedUpdate{UpdateID: "u2", Failure: &engine.Failure{Message: "no"}}}
	f.commit(refusal)
	if u := state("i1", "u2", store.UpdateRefused); u.Failure == nil || u.Failure.Message != "no" || !u.AnsweredAt.Equal(refusal.Now) {
		f.t.Fatalf("u2: %+v; want refused with no, answered at the commit", u)
	}
	item = f.lockID(t0.Add(3*time.Second), "i1")
	f.messages(item, u1, u3)
	accepted := func(u engine.Event) engine.Event { return u }
	done := engine.Event{Kind: engine.UpdateCompleted, UpdateID: "u1", Result: json.RawMessage(`"ok"`)}
	f.commit(turn(item, accepted(u1), scheduled("Charge"), done, accepted(u3)))
	if u := state("i1", "u1", store.UpdateCompleted); string(u.Result) != `"ok"` || u.Failure != nil || u.AnsweredAt.IsZero() {
		f.t.Fatalf("u1: %+v; want completed with \"ok\"", u)
	}
	state("i1", "u3", store.UpdateAccepted)
	again, _, err := request(nil, "i1", "u1")
	if err != nil || again.State != store.UpdateCompleted || string(again.Result) != `"ok"` {
		f.t.Fatalf("RequestUpdate u1 again: %+v, %v; want the first answer", again, err)
	}
	f.noWork(t0.Add(time.Hour))

	// u4 waits to be delivered when the execution continues as new: it
	// goes on; u3, accepted and unanswered, is answered with a failure.
	_, _, err = request(nil, "i1", "u4")
	f.must(err, "RequestUpdate u4")
	f.continueAsNew(f.lockID(t0.Add(time.Hour), "i1"))
	if u := state("i1", "u3", store.UpdateFailed); u.Failure == nil || !strings.Contains(u.Failure.Message, "continued as new") {
		f.t.Fatalf("u3 after continue-as-new: %+v", u)
	}
	state("i1", "u4", store.UpdateRequested)
	// The instance ends with u4 never delivered: it is answered.
	item = f.lockID(t0.Add(time.Hour), "i1")
	c := turn(item, started("i1", nextInput), completed(`"done"`))
	c.Status = engine.StatusCompleted
	f.commit(c)
	if u := state("i1", "u4", store.UpdateFailed); u.Failure == nil || !strings.Contains(u.Failure.Message, "ended (Completed)") {
		f.t.Fatalf("u4 after the end: %+v", u)
	}
	_, _, err = request(nil, "i1", "u5")
	f.wantErr(err, store.ErrFinished, "RequestUpdate of a finished instance")
	if u, _, err := request(nil, "i1", "u1"); err != nil || u.State != store.UpdateCompleted {
		f.t.Fatalf("RequestUpdate u1 of the finished instance: %+v, %v; want the first answer", u, err)
	}
	f.must(f.s.Purge(f.ctx, "i1"), "Purge i1")
	_, err = f.s.GetUpdate(f.ctx, "i1", "u1")
	f.wantErr(err, store.ErrNotFound, "GetUpdate of a purged instance")

	// Update with start: the new instance's first turn gets its start,
	// then the update; on a running instance, only the update.
	start := &store.NewInstance{ID: "i2", Name: orchestration, ModuleHash: module, Input: input("i2"), Now: t0}
	if _, started, err := request(start, "i2", "u1"); err != nil || !started {
		f.t.Fatalf("RequestUpdate with start of a new instance: %v, %v; want it started", started, err)
	}
	if _, started, err := request(start, "i2", "u2"); err != nil || started {
		f.t.Fatalf("RequestUpdate with start of an instance there: %v, %v; want the update only", started, err)
	}
	f.messages(f.lockID(t0.Add(time.Second), "i2"), started("i2", input("i2")), u1, u2)
}
