package storetest

import (
	"errors"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testHandoff: a store with store.Handoff does in one call what the
// plain calls do in a row. A start created locked is held (no fetch takes
// it) with its start message; a commit that leases takes up to max of the
// tasks it queues on the host's own queue, leaving the others (and those
// on named queues) to the fetches; an outcome whose instance nobody holds
// commits with the turn made of it (the result consumed, the next task
// leased), while one whose instance is held, or whose turn is declined,
// waits as a message, as CompleteActivity leaves it, as does one that a
// committed turn did not consume; a lost lease commits nothing. A store without it skips the test.
func testHandoff(f *fixture) {
	h, ok := f.s.(store.Handoff)
	if !ok {
		f.t.Skip("the store has no store.Handoff")
	}
	item, err := h.CreateLocked(f.ctx, store.NewInstance{ID: "i1", Name: orchestration, ModuleHash: module, Input: input("i1"), Now: t0}, lease)
	f.must(err, "CreateLocked")
	f.messages(item, started("i1", input("i1")))
	if item.Attempt != 1 || item.Instance.Status != engine.StatusPending {
		f.t.Fatalf("CreateLocked's item: Attempt %d, status %s; want 1, Pending", item.Attempt, item.Instance.Status)
	}
	f.noWork(t0)
	_, err = h.CreateLocked(f.ctx, store.NewInstance{ID: "i1", Name: orchestration, ModuleHash: module, Input: input("i1"), Now: t0}, lease)
	f.wantErr(err, store.ErrInstanceExists, "CreateLocked of a taken id")

	first := turn(item, started("i1", input("i1")), scheduled("Charge"), queued("Ship", "outside"), scheduled("Refund"))
	ws, err := h.CommitTurnLeasing(f.ctx, first, lease, 1)
	f.must(err, "CommitTurnLeasing")
	if len(ws) != 1 || ws[0].Task.Name != "Charge" || ws[0].Attempt != 1 || ws[0].InstanceID != "i1" {
		f.t.Fatalf("CommitTurnLeasing with max 1 leased %+v; want Charge, Attempt 1", ws)
	}
	charge := ws[0]
	refund := f.lease(t0)
	if refund.Task.Name != "Refund" {
		f.t.Fatalf("the fetch leased %s; want Refund, which the commit left", refund.Task.Name)
	}
	f.noActivity(t0)

	// The instance is held: the outcome waits as a message.
	f.enqueue("i1", raised("Approve"))
	held := f.lock(t0.Add(time.Second))
	turned, _, err := h.CompleteAndTurn(f.ctx, refund, activityCompleted(refund.Task.ScheduleID, `"refunded"`), t0.Add(time.Second), lease,
		func(*store.WorkItem) (*store.TurnCommit, int) {
			f.t.Fatal("next ran while another held the instance")
			return nil, 0
		})
	f.must(err, "CompleteAndTurn")
	if turned {
		f.t.Fatal("CompleteAndTurn ran a turn of an instance another held")
	}
	f.must(f.s.AbandonInstance(f.ctx, "i1", held.LockToken), "AbandonInstance")

	// A turn declined: the outcome waits too, and the instance is free.
	_, _, err = h.CompleteAndTurn(f.ctx, charge, activityCompleted(charge.Task.ScheduleID, `"charged"`), t0.Add(time.Second), lease,
		func(it *store.WorkItem) (*store.TurnCommit, int) {
			f.messages(it, raised("Approve"), activityCompleted(refund.Task.ScheduleID, `"refunded"`), activityCompleted(charge.Task.ScheduleID, `"charged"`))
			return nil, 0
		})
	f.must(err, "CompleteAndTurn")
	again := f.lock(t0.Add(time.Second))
	f.messages(again, raised("Approve"), activityCompleted(refund.Task.ScheduleID, `"refunded"`), activityCompleted(charge.Task.ScheduleID, `"charged"`))
	if again.Attempt != 2 {
		f.t.Fatalf("the lock after an abandoned and a declined turn has Attempt %d; want 2 (the declined one does not count)", again.Attempt)
	}
	second := turn(again, raised("Approve"), activityCompleted(refund.Task.ScheduleID, `"refunded"`), activityCompleted(charge.Task.ScheduleID, `"charged"`), scheduled("Notify"))
	ws, err = h.CommitTurnLeasing(f.ctx, second, lease, 5)
	f.must(err, "CommitTurnLeasing")
	if len(ws) != 1 || ws[0].Task.Name != "Notify" {
		f.t.Fatalf("CommitTurnLeasing leased %+v; want Notify", ws)
	}
	notify := ws[0]

	// Nobody holds it: the outcome commits with its turn.
	var third store.TurnCommit
	turned, ws, err = h.CompleteAndTurn(f.ctx, notify, activityCompleted(notify.Task.ScheduleID, `"notified"`), t0.Add(2*time.Second), lease,
		func(it *store.WorkItem) (*store.TurnCommit, int) {
			f.messages(it, activityCompleted(notify.Task.ScheduleID, `"notified"`))
			third = turn(it, activityCompleted(notify.Task.ScheduleID, `"notified"`), scheduled("Close"))
			return &third, 1
		})
	f.must(err, "CompleteAndTurn")
	if !turned || len(ws) != 1 || ws[0].Task.Name != "Close" {
		f.t.Fatalf("CompleteAndTurn: turned %v, leased %+v; want the turn committed and Close leased", turned, ws)
	}
	closing := ws[0]
	f.noWork(t0.Add(time.Hour))
	f.history("i1", 1, append(append(append([]engine.Event{}, first.NewEvents...), second.NewEvents...), third.NewEvents...))

	// A turn that commits without consuming the outcome: it waits as a
	// message.
	closed := activityCompleted(closing.Task.ScheduleID, `"closed"`)
	turned, _, err = h.CompleteAndTurn(f.ctx, closing, closed, t0.Add(3*time.Second), lease,
		func(it *store.WorkItem) (*store.TurnCommit, int) {
			f.messages(it, closed)
			return consumingNothing(it)
		})
	f.must(err, "CompleteAndTurn")
	if !turned {
		f.t.Fatal("CompleteAndTurn did not commit a turn that left the outcome")
	}
	left := f.lock(t0.Add(3 * time.Second))
	f.messages(left, closed)
	f.must(f.s.AbandonInstance(f.ctx, "i1", left.LockToken), "AbandonInstance")
	_, _, err = h.CompleteAndTurn(f.ctx, notify, activityCompleted(notify.Task.ScheduleID, `"again"`), t0.Add(3*time.Second), lease,
		func(*store.WorkItem) (*store.TurnCommit, int) {
			f.t.Fatal("next ran for a task already completed")
			return nil, 0
		})
	f.wantErr(err, store.ErrLeaseLost, "CompleteAndTurn of a task already completed")
}

// testCreateAndTurn: a store.Handoff's CreateAndTurn hands next the work
// item CreateLocked would return, before it writes anything, and writes
// the instance and the turn next made of it in one commit, which leases
// up to max of the tasks on the host's own queue and leaves no start
// message behind; the history, the status and the other tasks are what
// CreateLocked and CommitTurnLeasing in a row would leave. A turn
// declined writes nothing; an id taken or a module not deployed writes
// nothing and says so; a turn that does not consume the start leaves it
// as a message.
func testCreateAndTurn(f *fixture) {
	h, ok := f.s.(store.Handoff)
	if !ok {
		f.t.Skip("the store has no store.Handoff")
	}
	n := store.NewInstance{ID: "i1", Name: orchestration, ModuleHash: module, Input: input("i1"), Now: t0}
	turned, _, err := h.CreateAndTurn(f.ctx, n, lease, func(it *store.WorkItem) (*store.TurnCommit, int) {
		f.messages(it, started("i1", input("i1")))
		if it.Attempt != 1 || it.HistoryLen != 0 || it.LockToken == "" || it.Instance.Status != engine.StatusPending || it.Instance.ExecutionID != 1 ||
			it.Instance.ID != "i1" || it.Instance.Name != orchestration || it.Instance.ModuleHash != module || !it.Instance.CreatedAt.Equal(t0) {
			f.t.Fatalf("CreateAndTurn's work item: %+v; want i1 Pending in execution 1, created at t0, with no history, a lock token and Attempt 1", it)
		}
		if _, err := f.s.GetInstance(f.ctx, "i1"); !errors.Is(err, store.ErrNotFound) {
			f.t.Fatalf("GetInstance of i1 while its first turn runs: %v; want it not written yet", err)
		}
		return nil, 0
	})
	f.must(err, "CreateAndTurn with its turn declined")
	if turned {
		f.t.Fatal("CreateAndTurn reported a turn committed that next declined")
	}
	if _, err := f.s.GetInstance(f.ctx, "i1"); !errors.Is(err, store.ErrNotFound) {
		f.t.Fatalf("GetInstance of i1 after its first turn was declined: %v; want nothing written", err)
	}
	f.noWork(t0)

	var first store.TurnCommit
	turned, ws, err := h.CreateAndTurn(f.ctx, n, lease, func(it *store.WorkItem) (*store.TurnCommit, int) {
		first = turn(it, started("i1", input("i1")), scheduled("Charge"), queued("Ship", "outside"), scheduled("Refund"))
		charging := "charging"
		first.CustomStatus = &charging
		return &first, 1
	})
	f.must(err, "CreateAndTurn")
	if !turned || len(ws) != 1 || ws[0].Task.Name != "Charge" || ws[0].Attempt != 1 || ws[0].InstanceID != "i1" {
		f.t.Fatalf("CreateAndTurn with max 1: turned %v, leased %+v; want the turn committed and Charge leased, Attempt 1", turned, ws)
	}
	if inst := f.instance("i1"); inst.Status != engine.StatusRunning || !inst.CreatedAt.Equal(t0) || !inst.UpdatedAt.Equal(first.Now) ||
		string(inst.Input) != string(input("i1")) || inst.CustomStatus != "charging" {
		f.t.Fatalf("i1 after CreateAndTurn: %+v; want it Running, created at t0 with its input, updated at its turn's time with its custom status", inst)
	}
	f.history("i1", 1, first.NewEvents)
	f.noWork(t0.Add(time.Hour))
	if refund := f.lease(t0); refund.Task.Name != "Refund" {
		f.t.Fatalf("the fetch leased %s; want Refund, which the commit left", refund.Task.Name)
	}
	f.noActivity(t0)

	again := func(it *store.WorkItem) (*store.TurnCommit, int) {
		c := turn(it, started(it.Instance.ID, input(it.Instance.ID)), scheduled("Other"))
		return &c, 1
	}
	_, _, err = h.CreateAndTurn(f.ctx, n, lease, again)
	f.wantErr(err, store.ErrInstanceExists, "CreateAndTurn of a taken id")
	f.history("i1", 1, first.NewEvents)
	f.noActivity(t0)
	_, _, err = h.CreateAndTurn(f.ctx, store.NewInstance{ID: "i2", Name: orchestration, ModuleHash: "absent", Input: input("i2"), Now: t0}, lease, again)
	f.wantErr(err, store.ErrNotFound, "CreateAndTurn on a module not deployed")
	if _, err := f.s.GetInstance(f.ctx, "i2"); !errors.Is(err, store.ErrNotFound) {
		f.t.Fatalf("GetInstance of i2, whose module is not deployed: %v; want nothing written", err)
	}
	f.noActivity(t0)

	turned, _, err = h.CreateAndTurn(f.ctx, store.NewInstance{ID: "i3", Name: orchestration, ModuleHash: module, Input: input("i3"), Now: t0}, lease, consumingNothing)
	f.must(err, "CreateAndTurn of a turn that leaves the start")
	if !turned {
		f.t.Fatal("CreateAndTurn did not commit a turn that left the start")
	}
	f.messages(f.lock(t0), started("i3", input("i3")))
}

// consumingNothing is next for a handoff: a turn of it that commits
// nothing and consumes none of its messages.
func consumingNothing(it *store.WorkItem) (*store.TurnCommit, int) {
	c := turn(it)
	c.Consumed = nil
	return &c, 0
}
