package storetest

import (
	"encoding/json"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// newModule is a second module, deployed by the tests of moves and resets.
const newModule = "c0ffee"

func (f *fixture) deployNew() {
	f.t.Helper()
	f.must(f.s.PutModule(f.ctx, store.Module{Hash: newModule, Wasm: []byte("\x00asm2"), Orchestrations: []string{orchestration}, Activities: []string{"Charge"}, DeployedAt: t0}), "PutModule")
}

// moved is the ModuleChanged event that moves an instance with historyLen
// events from module to newModule.
func moved(historyLen int64) engine.Event {
	return engine.Event{ID: historyLen + 1, Kind: engine.ModuleChanged, Time: t0.Add(time.Hour), FromModule: module, Module: newModule}
}

func move(id string, historyLen int64, now time.Time) store.Move {
	return store.Move{InstanceID: id, ExecutionID: 1, HistoryLen: historyLen, From: module, To: newModule, Event: moved(historyLen), Now: now}
}

// testMoveInstance: a move changes the instance's module and appends its
// event to history, atomically; the next turn runs on the new module; its
// activity tasks that wait for a worker move with it, one a worker holds
// stays where it runs.
func testMoveInstance(f *fixture) {
	f.deployNew()
	f.create("i1")
	f.create("pending")
	kept := f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"), scheduled("Ship"))
	running := f.lease(t0)

	f.must(f.s.MoveInstance(f.ctx, move("i1", 3, t0)), "MoveInstance")
	if inst := f.instance("i1"); inst.ModuleHash != newModule || inst.Status != engine.StatusRunning {
		f.t.Fatalf("after the move: module %s, status %s; want %s, Running", inst.ModuleHash, inst.Status, newModule)
	}
	f.history("i1", 0, append(kept, moved(3)))
	if w := f.lease(t0); w.Task.Name != "Ship" || w.ModuleHash != newModule {
		f.t.Fatalf("the activity task waiting at the move: %+v; want Ship, on %s", w, newModule)
	}
	if running.Task.Name != "Charge" || running.ModuleHash != module {
		f.t.Fatalf("the activity task running at the move: %+v; want Charge, on %s", running, module)
	}
	f.enqueue("i1", raised("Go"))
	item := f.lockID(t0, "i1")
	if item.Instance.ModuleHash != newModule || item.HistoryLen != 4 {
		f.t.Fatalf("the next turn's instance: module %s, history %d; want %s, 4", item.Instance.ModuleHash, item.HistoryLen, newModule)
	}
	f.commit(turn(item, raised("Go")))

	// A pending instance moves before its first turn.
	f.must(f.s.MoveInstance(f.ctx, move("pending", 0, t0)), "MoveInstance of a pending instance")
	item = f.lockID(t0, "pending")
	f.messages(item, started("pending", input("pending")))
	f.commit(turn(item, started("pending", input("pending"))))
	f.history("pending", 0, []engine.Event{moved(0), {ID: 2, Kind: engine.OrchestrationStarted, Time: t0.Add(2 * time.Second), Name: orchestration, InstanceID: "pending", Input: input("pending")}})
}

// testMoveRefused: a move of an instance a turn holds, or that is not as
// the caller checked it, is refused and changes nothing; a lock that has
// expired does not hold the instance, and its turn can no longer commit.
func testMoveRefused(f *fixture) {
	f.deployNew()
	f.create("i1")
	f.create("done")
	kept := f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"))
	f.run("done", t0, started("done", input("done")), completed(`"ok"`))
	unknownModule := move("i1", 2, t0)
	unknownModule.To = "not-deployed"
	wrongFrom := move("i1", 2, t0)
	wrongFrom.From = newModule
	for _, tt := range []struct {
		name string
		m    store.Move
		want error
	}{
		{"history went on", move("i1", 1, t0), store.ErrChanged},
		{"another execution", store.Move{InstanceID: "i1", ExecutionID: 2, HistoryLen: 2, From: module, To: newModule, Event: moved(2), Now: t0}, store.ErrChanged},
		{"on another module", wrongFrom, store.ErrChanged},
		{"finished", move("done", 2, t0), store.ErrChanged},
		{"unknown instance", move("nope", 0, t0), store.ErrNotFound},
		{"unknown module", unknownModule, store.ErrNotFound},
	} {
		f.wantErr(f.s.MoveInstance(f.ctx, tt.m), tt.want, "MoveInstance: "+tt.name)
	}
	f.enqueue("i1", raised("Go"))
	held := f.lockID(t0, "i1")
	f.wantErr(f.s.MoveInstance(f.ctx, move("i1", 2, t0.Add(lease-time.Second))), store.ErrBusy, "MoveInstance of an instance a turn holds")
	if inst := f.instance("i1"); inst.ModuleHash != module {
		f.t.Fatalf("after refused moves the instance runs on %s; want %s", inst.ModuleHash, module)
	}
	f.history("i1", 0, kept)

	f.must(f.s.MoveInstance(f.ctx, move("i1", 2, t0.Add(lease+time.Second))), "MoveInstance once the turn's lock expired")
	f.wantErr(f.s.CommitTurn(f.ctx, turn(held, raised("Go"))), store.ErrLeaseLost, "CommitTurn of the turn whose lock expired before the move")
	f.history("i1", 0, append(kept, moved(2)))
}

// testResetInstance: a reset starts the next execution with the kept
// history on the new module, and queues again what was in flight at the
// reset point: the activity, the timer, the report of a child that ended
// after it; it raises again the events the discarded part took, keeps the
// messages not yet taken, drops the old execution's completions and its
// queued activities, and detaches the children the discarded part started.
func testResetInstance(f *fixture) {
	f.deployNew()
	f.create("i1")
	due := t0.Add(time.Hour)
	first := turn(f.lockID(t0, "i1"), started("i1", input("i1")), scheduled("Charge"), timerCreated(due), childScheduled("i1:4"))
	first.Children = []store.NewChild{childOf("i1:4", 4, module)}
	f.commit(first)
	f.run("i1:4", t0, started("i1:4", input("i1:4")), completed(`"kid"`))
	w := f.lease(t0)
	f.must(f.s.CompleteActivity(f.ctx, w, activityCompleted(2, `"charged"`), t0), "CompleteActivity")
	second := turn(f.lockID(t0, "i1"),
		engine.Event{Kind: engine.SubOrchestrationCompleted, ScheduleID: 4, Result: json.RawMessage(`"kid"`)},
		activityCompleted(2, `"charged"`), scheduled("Ship"), childScheduled("i1:7"))
	second.Children = []store.NewChild{childOf("i1:7", 8, module)}
	f.commit(second)
	f.enqueue("i1", raised("Go"))
	old := f.run("i1", t0, raised("Go"))
	f.enqueue("i1", raised("Later"))

	history, err := f.s.History(f.ctx, "i1", 0)
	f.must(err, "History")
	plan, err := engine.PlanReset(history, 4)
	f.must(err, "PlanReset")
	marker := engine.Event{Kind: engine.ExecutionReset, Module: newModule, FromModule: module, SeedExecution: 1, Reason: "reset to event 4"}
	r := store.Reset{InstanceID: "i1", ExecutionID: 1, HistoryLen: 9, Module: newModule, Kept: plan.Kept, CustomStatus: "checking",
		Marker: marker, InFlight: plan.InFlight, Raise: plan.Raise, Detach: []string{"i1:7"}, Now: t0}
	f.must(f.s.ResetInstance(f.ctx, r), "ResetInstance")

	inst := f.instance("i1")
	if inst.ExecutionID != 2 || inst.Status != engine.StatusRunning || inst.ModuleHash != newModule || inst.CustomStatus != "checking" {
		f.t.Fatalf("after the reset: %+v; want execution 2, Running, on %s, custom status checking", inst, newModule)
	}
	f.history("i1", 2, plan.Kept)
	f.history("i1", 1, append(first.NewEvents, append(second.NewEvents, old...)...))
	// Ship, queued by the discarded part, is gone; Charge runs again, on
	// the new module, for the new execution.
	if w := f.lease(t0); w.Task.Name != "Charge" || w.ExecutionID != 2 || w.ModuleHash != newModule || w.Task.ScheduleID != 2 {
		f.t.Fatalf("the activity task after the reset: %+v; want Charge (event 2) of execution 2 on %s", w, newModule)
	}
	f.noActivity(t0)
	item := f.lockID(t0, "i1")
	if item.HistoryLen != 4 {
		f.t.Fatalf("the new execution's first turn has a history of %d; want 4", item.HistoryLen)
	}
	f.messages(item, marker, engine.Event{Kind: engine.SubOrchestrationCompleted, ScheduleID: 4, Result: json.RawMessage(`"kid"`)}, raised("Go"), raised("Later"))
	f.commit(turn(item, marker))
	// The timer in flight fires when due; the child the discarded part
	// started reports to nobody.
	f.run("i1:7", t0, started("i1:7", input("i1:7")), completed(`"seven"`))
	f.noWork(due.Add(-time.Second))
	f.messages(f.lockID(due, "i1"), timerFired(3, due))
}

// testResetRefused: a reset of an instance a turn holds, or that is not as
// the caller read it, is refused and changes nothing.
func testResetRefused(f *fixture) {
	f.deployNew()
	f.create("i1")
	kept := f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"))
	reset := func(historyLen int64, hash string, now time.Time) store.Reset {
		return store.Reset{InstanceID: "i1", ExecutionID: 1, HistoryLen: historyLen, Module: hash, Kept: kept[:1],
			Marker: engine.Event{Kind: engine.ExecutionReset, Module: hash, SeedExecution: 1}, Now: now}
	}
	f.wantErr(f.s.ResetInstance(f.ctx, reset(1, newModule, t0)), store.ErrChanged, "ResetInstance of a history that went on")
	f.wantErr(f.s.ResetInstance(f.ctx, reset(2, "not-deployed", t0)), store.ErrNotFound, "ResetInstance onto a module not deployed")
	f.enqueue("i1", raised("Go"))
	held := f.lockID(t0, "i1")
	f.wantErr(f.s.ResetInstance(f.ctx, reset(2, newModule, t0)), store.ErrBusy, "ResetInstance of an instance a turn holds")
	f.must(f.s.AbandonInstance(f.ctx, "i1", held.LockToken), "AbandonInstance")
	if inst := f.instance("i1"); inst.ExecutionID != 1 || inst.ModuleHash != module {
		f.t.Fatalf("after refused resets: execution %d on %s; want 1 on %s", inst.ExecutionID, inst.ModuleHash, module)
	}
	f.history("i1", 0, kept)
	if w := f.lease(t0); w.Task.Name != "Charge" || w.ExecutionID != 1 {
		f.t.Fatalf("after refused resets the activity task is %+v; want Charge of execution 1", w)
	}
	f.messages(f.lockID(t0, "i1"), raised("Go"))
}
