package storetest

import (
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// finish runs instance id's only turn at t0, which ends it with end
// (completed, failed, terminated) as status, at the commit's time at.
func (f *fixture) finish(id string, status engine.Status, end engine.Event, at time.Time) {
	f.t.Helper()
	c := turn(f.lockID(t0, id), started(id, input(id)), end)
	c.Status, c.Now = status, at
	f.commit(c)
}

// testEnqueueForAFinishedInstance: a message for an instance that has
// finished is refused, persistent or not, and nothing is queued.
func testEnqueueForAFinishedInstance(f *fixture) {
	f.create("i1")
	f.finish("i1", engine.StatusCompleted, completed(`"done"`), t0)
	f.wantErr(f.s.Enqueue(f.ctx, "i1", raised("Approve"), t0, nil), store.ErrFinished, "Enqueue for a completed instance")
	f.wantErr(f.s.EnqueuePersistent(f.ctx, "i1", persistent("Note"), 5, t0, nil), store.ErrFinished, "EnqueuePersistent for a completed instance")
	f.wantErr(f.s.EnqueuePersistent(f.ctx, "absent", persistent("Note"), 5, t0, nil), store.ErrNotFound, "EnqueuePersistent for an instance that does not exist")
	f.noWork(t0.Add(time.Hour))
}

// testRaises: the events a turn raises reach their instances with the
// commit, and the sender gets each one's outcome in the same commit: the
// event delivered (to an instance, or itself), or not, saying why (no
// such instance, finished, at the persistent limit).
func testRaises(f *fixture) {
	f.create("i1")
	f.create("other")
	f.create("done")
	f.create("full")
	f.finish("done", engine.StatusCompleted, completed(`"done"`), t0)
	f.run("full", t0, started("full", input("full")))
	for i := range engine.MaxPersistentEvents {
		f.enqueue("full", persistent(fmt.Sprint(i)))
	}
	f.run("i1", t0, started("i1", input("i1")))
	f.enqueue("i1", raised("Go"))
	raise := func(id int64, to string, persistent bool) engine.RaiseTask {
		return engine.RaiseTask{ScheduleID: id, InstanceID: to, Name: "Ping", Data: []byte(`1`), Persistent: persistent}
	}
	raises := []engine.RaiseTask{raise(2, "other", false), raise(3, "i1", true), raise(4, "nobody", false), raise(5, "done", false), raise(6, "full", true)}
	c := turn(f.lockID(t0.Add(time.Second), "i1"))
	c.Raises = raises
	f.commit(c)
	f.messages(f.lockID(t0.Add(time.Minute), "other"), started("other", input("other")), raises[0].Message())
	f.messages(f.lockID(t0.Add(time.Minute), "i1"), raises[0].Delivered(), raises[1].Message(), raises[1].Delivered(),
		raises[2].NotDelivered("no such instance exists"),
		raises[3].NotDelivered("instance finished: it is Completed"),
		raises[4].NotDelivered(fmt.Sprintf("too many persistent events: its execution has taken 0 and has %d waiting, at most %[1]d between them", engine.MaxPersistentEvents)))
}

// testCreateWithEvent: signal with start creates an instance with the
// event after its start, or gives the event to the instance that has the
// id, under Enqueue's rules.
func testCreateWithEvent(f *fixture) {
	withEvent := func(id string, ev engine.Event, max int) (bool, error) {
		return f.s.CreateWithEvent(f.ctx, store.NewInstance{ID: id, Name: orchestration, ModuleHash: module, Input: input(id), Now: t0}, ev, max)
	}
	created, err := withEvent("i1", raised("Go"), 0)
	if err != nil || !created {
		f.t.Fatalf("CreateWithEvent of a new instance: %v, %v; want it created", created, err)
	}
	f.run("i1", t0, started("i1", input("i1")))
	created, err = withEvent("i1", persistent("Note"), 5)
	if err != nil || created {
		f.t.Fatalf("CreateWithEvent of a running instance: %v, %v; want the event only", created, err)
	}
	f.messages(f.lockID(t0.Add(time.Second), "i1"), persistent("Note"))
	f.create("i2")
	f.finish("i2", engine.StatusCompleted, completed(`"done"`), t0)
	_, err = withEvent("i2", raised("Go"), 0)
	f.wantErr(err, store.ErrFinished, "CreateWithEvent of a finished instance")
	if inst := f.instance("i1"); inst.Status != engine.StatusRunning {
		f.t.Fatalf("i1 is %s; want Running", inst.Status)
	}
	// The new instance's first turn gets its start, then the event.
	if created, err = withEvent("i3", raised("Go"), 0); err != nil || !created {
		f.t.Fatalf("CreateWithEvent of i3: %v, %v; want it created", created, err)
	}
	f.messages(f.lockID(t0.Add(time.Second), "i3"), started("i3", input("i3")), raised("Go"))
}

// testPersistentEventLimit: persistent events taken and waiting count
// together against the limit; a continue-as-new starts the count again
// with the events it carries.
func testPersistentEventLimit(f *fixture) {
	const max = 3
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")))
	f.enqueue("i1", raised("Go"))
	raise := func(name string) error { return f.s.EnqueuePersistent(f.ctx, "i1", persistent(name), max, t0, nil) }
	for _, name := range []string{"a", "b"} {
		f.must(raise(name), "EnqueuePersistent "+name)
	}
	// A positional event does not count.
	f.enqueue("i1", raised("X"))
	item := f.lockID(t0, "i1")
	f.must(raise("c"), "EnqueuePersistent c, while a turn runs")
	f.wantErr(raise("d"), store.ErrTooManyEvents, "EnqueuePersistent past the limit, two waiting and one more")
	// The turn takes a and b (c came during it); taken and waiting are
	// still three.
	f.commit(turn(item, persistent("a"), persistent("b"), raised("X")))
	f.wantErr(raise("d"), store.ErrTooManyEvents, "EnqueuePersistent past the limit, two taken and one waiting")
	f.enqueue("i1", raised("Next"))
	item = f.lockID(t0, "i1")
	f.messages(item, persistent("c"), raised("Next"))
	// The next execution begins with "kept" carried: two more fit.
	f.continueAsNew(item)
	for _, name := range []string{"e", "f"} {
		f.must(raise(name), "EnqueuePersistent "+name+" in the next execution")
	}
	f.wantErr(raise("g"), store.ErrTooManyEvents, "EnqueuePersistent past the limit in the next execution")
	f.messages(f.lockID(t0, "i1"), next("i1", persistent("e"), persistent("f"))...)
}

// testDeleteModule: a module is deleted only when no instance runs on it;
// its orchestrations go back to the newest module left that registers
// them.
func testDeleteModule(f *fixture) {
	f.wantErr(f.s.DeleteModule(f.ctx, "absent"), store.ErrNotFound, "DeleteModule of a module never stored")
	newer := store.Module{Hash: "f00d", Wasm: []byte("\x00asm 2"), Orchestrations: []string{orchestration, "Refund"}, DeployedAt: t0.Add(time.Minute)}
	f.must(f.s.PutModule(f.ctx, newer), "PutModule")
	for _, id := range []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"} {
		f.create(id)
	}
	f.wantErr(f.s.DeleteModule(f.ctx, module), store.ErrModuleInUse, "DeleteModule of a module instances run on")
	f.must(f.s.DeleteModule(f.ctx, "f00d"), "DeleteModule of a module no instance runs on")
	_, err := f.s.GetModule(f.ctx, "f00d")
	f.wantErr(err, store.ErrNotFound, "GetModule of a deleted module")
	if hash, err := f.s.ModuleFor(f.ctx, orchestration); err != nil || hash != module {
		f.t.Fatalf("ModuleFor(%q) after the newer module was deleted = %q, %v; want the one left, %s", orchestration, hash, err, module)
	}
	_, err = f.s.ModuleFor(f.ctx, "Refund")
	f.wantErr(err, store.ErrNotFound, "ModuleFor of an orchestration only the deleted module registered")
	f.must(f.s.PutModule(f.ctx, newer), "PutModule again")
	if hash, err := f.s.ModuleFor(f.ctx, "Refund"); err != nil || hash != "f00d" {
		f.t.Fatalf("ModuleFor(Refund) after the module came back = %q, %v; want f00d", hash, err)
	}
	for _, id := range []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"} {
		f.finish(id, engine.StatusCompleted, completed(`"done"`), t0)
		f.must(f.s.Purge(f.ctx, id), "Purge "+id)
	}
	f.must(f.s.DeleteModule(f.ctx, module), "DeleteModule once its instances are purged")
	if infos, err := f.s.ListModules(f.ctx); err != nil || len(infos) != 1 || infos[0].Hash != "f00d" {
		f.t.Fatalf("ListModules = %+v, %v; want f00d alone", infos, err)
	}
}

// testPurgeInstances: a bulk purge takes the finished instances a filter
// selects, those that finished first first, never one still running.
func testPurgeInstances(f *fixture) {
	ends := []struct {
		id     string
		status engine.Status
		end    engine.Event
		at     time.Time
	}{
		{"late", engine.StatusCompleted, completed(`"late"`), t0.Add(3 * time.Hour)},
		{"early", engine.StatusCompleted, completed(`"early"`), t0.Add(time.Hour)},
		{"failed", engine.StatusFailed, failed("broke"), t0.Add(2 * time.Hour)},
		{"terminated", engine.StatusTerminated, engine.Event{Kind: engine.OrchestrationTerminated, Reason: "stop"}, t0.Add(2 * time.Hour)},
	}
	for _, e := range ends {
		f.create(e.id)
		f.finish(e.id, e.status, e.end, e.at)
	}
	f.create("running")
	f.run("running", t0, started("running", input("running")))
	f.create("pending")
	// purge purges with filter and max, and checks it purged want, in any
	// order.
	purge := func(filter store.InstanceFilter, max int, want ...string) {
		f.t.Helper()
		got, err := f.s.PurgeInstances(f.ctx, filter, max)
		f.must(err, "PurgeInstances")
		slices.Sort(got)
		if slices.Sort(want); !slices.Equal(got, want) {
			f.t.Fatalf("PurgeInstances(%+v, %d) = %q; want %q", filter, max, got, want)
		}
	}
	purge(store.InstanceFilter{FinishedBefore: t0.Add(2 * time.Hour)}, 10, "early")
	purge(store.InstanceFilter{Statuses: []engine.Status{engine.StatusCompleted, engine.StatusRunning, engine.StatusPending}}, 10, "late")
	// Two selected, one at a time.
	got, err := f.s.PurgeInstances(f.ctx, store.InstanceFilter{FinishedBefore: t0.Add(3 * time.Hour)}, 1)
	if f.must(err, "PurgeInstances"); len(got) != 1 || got[0] != "failed" && got[0] != "terminated" {
		f.t.Fatalf("PurgeInstances with a max of 1 = %q; want failed or terminated", got)
	}
	purge(store.InstanceFilter{}, 10, map[string]string{"failed": "terminated", "terminated": "failed"}[got[0]])
	purge(store.InstanceFilter{}, 10)
	if left := f.list(store.InstanceFilter{}); !slices.Equal(left, []string{"pending", "running"}) {
		f.t.Fatalf("instances left: %q; want those that have not finished", left)
	}
}

// testDeleteExecutions: the histories of executions that continued as new
// before a time go, oldest first; the instance and its current execution
// stay.
func testDeleteExecutions(f *fixture) {
	var ended []time.Time
	for _, id := range []string{"i1", "i2"} {
		f.create(id)
		f.run(id, t0, started(id, input(id)))
		f.enqueue(id, raised("Next"))
		item := f.lockID(t0, id)
		ended = append(ended, t0.Add(time.Duration(len(ended)+1)*time.Hour))
		c := turn(item, raised("Next"), engine.Event{Kind: engine.OrchestrationContinuedAsNew, Input: nextInput})
		c.Status, c.Now = engine.StatusContinuedAsNew, ended[len(ended)-1]
		c.ContinueAsNew = &engine.ContinueAsNew{Input: nextInput, Started: started(id, nextInput)}
		f.commit(c)
	}
	deleted := func(before time.Time, max, want int) {
		f.t.Helper()
		n, err := f.s.DeleteExecutions(f.ctx, before, max)
		if f.must(err, "DeleteExecutions"); n != want {
			f.t.Fatalf("DeleteExecutions(%s, %d) = %d; want %d", clock(before), max, n, want)
		}
	}
	deleted(ended[0], 10, 0)
	deleted(ended[1].Add(time.Second), 1, 1)
	_, err := f.s.History(f.ctx, "i1", 1)
	f.wantErr(err, store.ErrNotFound, "History of an execution deleted")
	f.mustHistory("i2", 1)
	deleted(ended[1].Add(time.Second), 10, 1)
	deleted(ended[1].Add(time.Second), 10, 0)
	for _, id := range []string{"i1", "i2"} {
		f.history(id, 2, nil)
		if xs, err := f.s.Executions(f.ctx, id); err != nil || len(xs) != 1 || xs[0].ID != 2 {
			f.t.Fatalf("Executions of %s after its first was deleted = %+v, %v; want the current one, 2, alone", id, xs, err)
		}
		if inst := f.instance(id); inst.ExecutionID != 2 || inst.Status != engine.StatusPending {
			f.t.Fatalf("instance %s after its first execution was deleted: %+v", id, inst)
		}
	}
}

// mustHistory returns an execution's history, which must exist.
func (f *fixture) mustHistory(id string, execution int64) []engine.Event {
	f.t.Helper()
	h, err := f.s.History(f.ctx, id, execution)
	f.must(err, "History")
	if len(h) == 0 {
		f.t.Fatalf("execution %d of %s has no history", execution, id)
	}
	return h
}

// testDropWaiting: a commit that drops what waits removes the instance's
// messages (timers too) and the activity tasks no worker holds; a task a
// worker holds finishes, and its result goes nowhere.
func testDropWaiting(f *fixture) {
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"), scheduled("Ship"), timerCreated(t0.Add(time.Hour)))
	held := f.lease(t0)
	f.enqueue("i1", raised("Go"))
	item := f.lockID(t0, "i1")
	f.enqueue("i1", raised("Approve"))
	c := turn(item, raised("Go"), engine.Event{Kind: engine.OrchestrationTerminated, Reason: "stop"})
	c.Status, c.DropWaiting = engine.StatusTerminated, true
	f.commit(c)
	f.must(f.s.CompleteActivity(f.ctx, held, activityCompleted(2, `"charged"`), t0), "CompleteActivity of the task held")
	f.noActivity(t0.Add(2 * time.Hour))
	f.noWork(t0.Add(2 * time.Hour))
	if inst := f.instance("i1"); inst.Status != engine.StatusTerminated {
		f.t.Fatalf("instance %s; want Terminated", inst.Status)
	}
}

// testQueueStats: what waits, counted, with the oldest message and task;
// the timers are those of instances that can still take them.
func testQueueStats(f *fixture) {
	now := t0.Add(30 * time.Second)
	stats := func(want store.QueueStats) {
		f.t.Helper()
		got, err := f.s.QueueStats(f.ctx, now)
		f.must(err, "QueueStats")
		if g, w := describeStats(got), describeStats(want); g != w {
			f.t.Fatalf("QueueStats:\n%s\nwant:\n%s", g, w)
		}
	}
	stats(store.QueueStats{})
	f.createAt("busy", orchestration, module, t0)
	f.run("busy", t0, started("busy", input("busy")), scheduled("Charge"), scheduled("Ship"), timerCreated(t0.Add(time.Hour)))
	f.lease(t0)
	f.createAt("new", orchestration, module, t0.Add(10*time.Second))
	f.must(f.s.Enqueue(f.ctx, "busy", raised("Approve"), t0.Add(20*time.Second), nil), "Enqueue")
	f.create("locked")
	f.lockID(t0, "locked")
	// An instance that finished before its timer came due: nothing waits
	// for that timer, which only a purge deletes.
	f.create("done")
	f.run("done", t0, started("done", input("done")), timerCreated(t0.Add(time.Minute)), completed(`"early"`))
	stats(store.QueueStats{
		Ready: 3, ReadyInstances: 3, Starts: 2, Timers: 1, NextTimer: t0.Add(time.Hour), Locked: 1, Activities: 1, Running: 1,
		// The start of locked came first, at t0, and waits still.
		OldestReady:    &store.WaitingItem{InstanceID: "locked", What: string(engine.OrchestrationStarted), Since: t0},
		OldestActivity: &store.WaitingItem{InstanceID: "busy", What: "Ship", Since: t0.Add(4 * time.Second)},
	})
}

// describeStats writes queue stats in a form where equal stats read the
// same.
func describeStats(q store.QueueStats) string {
	item := func(w *store.WaitingItem) string {
		if w == nil {
			return "none"
		}
		return w.InstanceID + " " + w.What + " since " + clock(w.Since)
	}
	next := "none"
	if !q.NextTimer.IsZero() {
		next = clock(q.NextTimer)
	}
	return fmt.Sprintf("ready %d for %d instances, %d starts; oldest %s\ntimers %d, next %s\nlocked %d\nactivities %d waiting, %d running; oldest %s",
		q.Ready, q.ReadyInstances, q.Starts, item(q.OldestReady), q.Timers, next, q.Locked, q.Activities, q.Running, item(q.OldestActivity))
}

// testPing: a store that is open answers Ping; once closed, it does not.
func testPing(f *fixture) {
	f.must(f.s.Ping(f.ctx), "Ping")
	f.must(f.s.Close(), "Close")
	if err := f.s.Ping(f.ctx); err == nil {
		f.t.Fatal("Ping of a closed store: no error")
	}
}
