package storetest

import (
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testModules: a module comes back with its bytes; ModuleFor names the
// newest module that registers an orchestration.
func testModules(f *fixture) {
	newer := store.Module{Hash: "f00d", Wasm: []byte("\x00asm 2"), Orchestrations: []string{orchestration, "Refund"}, Env: []string{"A=1"}, DeployedAt: t0.Add(time.Minute)}
	f.must(f.s.PutModule(f.ctx, newer), "PutModule")
	m, err := f.s.GetModule(f.ctx, "f00d")
	f.must(err, "GetModule")
	if string(m.Wasm) != "\x00asm 2" || !slices.Equal(m.Orchestrations, newer.Orchestrations) || !slices.Equal(m.Env, newer.Env) {
		f.t.Fatalf("GetModule = %q, %q, env %q; want the module stored", m.Wasm, m.Orchestrations, m.Env)
	}
	_, err = f.s.GetModule(f.ctx, "absent")
	f.wantErr(err, store.ErrNotFound, "GetModule of a module never stored")
	if hash, err := f.s.ModuleFor(f.ctx, orchestration); err != nil || hash != "f00d" {
		f.t.Fatalf("ModuleFor(%q) = %q, %v; want the newest module, f00d", orchestration, hash, err)
	}
	_, err = f.s.ModuleFor(f.ctx, "Unknown")
	f.wantErr(err, store.ErrNotFound, "ModuleFor of an orchestration no module registers")
	infos, err := f.s.ListModules(f.ctx)
	f.must(err, "ListModules")
	var hashes []string
	for _, info := range infos {
		hashes = append(hashes, info.Hash)
	}
	if !slices.Equal(hashes, []string{"f00d", module}) {
		f.t.Fatalf("ListModules = %q; want newest first, [f00d %s]", hashes, module)
	}
}

// testModulesWithWork: a module has work while one of its instances has a
// message (due or not) or an activity task waiting, and none once they are
// consumed.
func testModulesWithWork(f *fixture) {
	f.must(f.s.PutModule(f.ctx, store.Module{Hash: "f00d", Wasm: []byte("\x00asm 2"), Orchestrations: []string{"Refund"}, DeployedAt: t0}), "PutModule")
	want := func(when string, hashes ...string) {
		f.t.Helper()
		got, err := f.s.ModulesWithWork(f.ctx)
		f.must(err, "ModulesWithWork")
		if !slices.Equal(got, hashes) {
			f.t.Fatalf("ModulesWithWork %s = %q; want %q", when, got, hashes)
		}
	}
	want("of an empty store")
	f.create("i1")
	f.must(f.s.CreateInstance(f.ctx, store.NewInstance{ID: "i2", Name: "Refund", ModuleHash: "f00d", Input: input("i2"), Now: t0}), "CreateInstance i2")
	want("with both instances starting", module, "f00d")
	f.run("i2", t0, started("i2", input("i2")), completed(`"refunded"`))
	f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"))
	want("with an activity task of i1 waiting and i2 completed", module)
	f.must(f.s.CompleteActivity(f.ctx, f.lease(t0), activityCompleted(2, `"charged"`), t0), "CompleteActivity")
	want("with the activity's result waiting", module)
	f.run("i1", t0, activityCompleted(2, `"charged"`), timerCreated(t0.Add(time.Hour)))
	want("with a timer of i1 not due yet", module)
	f.run("i1", t0.Add(time.Hour), timerFired(4, t0.Add(time.Hour)), completed(`"done"`))
	want("with both instances completed")
}

// testCreateInstance: an instance starts Pending in execution 1 with one
// OrchestrationStarted message; creating it again, on a module not
// deployed, or enqueueing for an instance that does not exist, is refused.
func testCreateInstance(f *fixture) {
	f.create("i1")
	err := f.s.CreateInstance(f.ctx, store.NewInstance{ID: "i1", Name: orchestration, ModuleHash: module, Input: input("again"), Now: t0.Add(time.Hour)})
	f.wantErr(err, store.ErrInstanceExists, "CreateInstance of an id taken")
	err = f.s.CreateInstance(f.ctx, store.NewInstance{ID: "i2", Name: orchestration, ModuleHash: "not-deployed", Now: t0})
	f.wantErr(err, store.ErrNotFound, "CreateInstance on a module not deployed")
	_, err = f.s.GetInstance(f.ctx, "i2")
	f.wantErr(err, store.ErrNotFound, "GetInstance of an instance whose creation was refused")
	f.wantErr(f.s.Enqueue(f.ctx, "absent", raised("Approve"), t0, nil), store.ErrNotFound, "Enqueue for an instance that does not exist")
	_, err = f.s.History(f.ctx, "absent", 0)
	f.wantErr(err, store.ErrNotFound, "History of an instance that does not exist")

	inst := f.instance("i1")
	if inst.ID != "i1" || inst.Name != orchestration || inst.ModuleHash != module || inst.ExecutionID != 1 || inst.Status != engine.StatusPending ||
		string(inst.Input) != `"i1"` || inst.Result != nil || inst.Failure != nil || !inst.CreatedAt.Equal(t0) {
		f.t.Fatalf("instance %+v; want i1 of %s on %s, execution 1, Pending, input \"i1\", created at t0, as first created", inst, orchestration, module)
	}
	if all := f.list(store.InstanceFilter{}); !slices.Equal(all, []string{"i1"}) {
		f.t.Fatalf("ListInstances = %q; want i1 alone", all)
	}
	item := f.lock(t0)
	if item.Instance.ID != "i1" || item.HistoryLen != 0 || item.Attempt != 1 {
		f.t.Fatalf("first work: instance %q, HistoryLen %d, Attempt %d; want i1, 0, 1", item.Instance.ID, item.HistoryLen, item.Attempt)
	}
	f.messages(item, started("i1", input("i1")))
}

// testMessagesOldestFirst: an instance gets its messages in the order they
// were enqueued.
func testMessagesOldestFirst(f *fixture) {
	f.create("i1")
	names := []string{"c", "a", "b", "a"}
	want := []engine.Event{started("i1", input("i1"))}
	for _, name := range names {
		f.enqueue("i1", raised(name))
		want = append(want, raised(name))
	}
	f.messages(f.lock(t0), want...)
}

// testOldestMessageServedFirst: instances that have begun are locked
// before new ones, each group by its oldest visible message.
func testOldestMessageServedFirst(f *fixture) {
	f.create("b")
	f.create("a")
	f.create("c")
	f.run("a", t0, started("a", input("a")))
	f.run("b", t0, started("b", input("b")))
	f.enqueue("b", raised("Approve"))
	f.enqueue("a", raised("Approve"))
	f.create("d")
	for _, want := range []string{"b", "a", "c", "d"} {
		if item := f.lock(t0); item.Instance.ID != want {
			f.t.Fatalf("locked %q; want %q (begun before new, then oldest message first)", item.Instance.ID, want)
		}
	}
	f.noWork(t0)
}
