package storetest

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// activities leases every activity task it can at now and returns their
// names, in the order they were handed out.
func (f *fixture) activities(now time.Time) []string {
	f.t.Helper()
	var names []string
	for {
		w, err := f.leaseNext(now)
		f.must(err, "LockNextActivities")
		if w == nil {
			return names
		}
		names = append(names, w.Task.Name)
	}
}

// sameDelivery fails the test unless again is the next delivery of the
// work first was: another token, and the attempt after first's.
func (f *fixture) sameDelivery(what string, firstToken, againToken string, firstAttempt, againAttempt int) {
	f.t.Helper()
	if againToken == firstToken || againAttempt != firstAttempt+1 {
		f.t.Fatalf("%s delivered again with token %q (first %q), Attempt %d (first %d); want a new token and Attempt %d",
			what, againToken, firstToken, againAttempt, firstAttempt, firstAttempt+1)
	}
}

// testInstanceLease: a locked instance is not handed out again before its
// lease expires and is after, with a new token; the old token can neither
// commit nor abandon; a commit resets Attempt.
func testInstanceLease(f *fixture) {
	f.create("i1")
	first := f.lock(t0)
	if first.Attempt != 1 {
		f.t.Fatalf("first delivery has Attempt %d; want 1", first.Attempt)
	}
	f.noWork(t0.Add(lease - time.Second))
	again := f.lock(t0.Add(lease + time.Second))
	f.sameDelivery("instance i1", first.LockToken, again.LockToken, first.Attempt, again.Attempt)
	f.messages(again, started("i1", input("i1")))
	f.wantErr(f.s.CommitTurn(f.ctx, turn(first, started("i1", input("i1")))), store.ErrLeaseLost, "CommitTurn with the expired lock's token")
	f.must(f.s.AbandonInstance(f.ctx, "i1", first.LockToken), "AbandonInstance with the expired lock's token")
	f.noWork(t0.Add(lease + 2*time.Second))
	f.commit(turn(again, started("i1", input("i1"))))
	f.enqueue("i1", raised("Approve"))
	if next := f.lock(t0.Add(lease + 2*time.Second)); next.Attempt != 1 || next.HistoryLen != 1 {
		f.t.Fatalf("delivery after a commit has Attempt %d, HistoryLen %d; want 1, 1", next.Attempt, next.HistoryLen)
	}
}

// testLockSeveral: one call locks or leases up to max pieces of work,
// oldest first, each once; what it leaves is for the next call; a max
// below one is refused.
func testLockSeveral(f *fixture) {
	for _, id := range []string{"i1", "i2", "i3"} {
		f.create(id)
	}
	ids := func(items []*store.WorkItem) []string {
		var out []string
		for _, item := range items {
			out = append(out, item.Instance.ID)
		}
		return out
	}
	items, err := f.s.LockNextInstances(f.ctx, t0, lease, 2, nil)
	f.must(err, "LockNextInstances")
	if got := ids(items); !slices.Equal(got, []string{"i1", "i2"}) {
		f.t.Fatalf("LockNextInstances with max 2 locked %q; want the two oldest, [i1 i2]", got)
	}
	rest, err := f.s.LockNextInstances(f.ctx, t0, lease, 5, nil)
	f.must(err, "LockNextInstances")
	if got := ids(rest); !slices.Equal(got, []string{"i3"}) {
		f.t.Fatalf("LockNextInstances with max 5 locked %q; want what was left, [i3]", got)
	}
	f.noWork(t0)
	if _, err := f.s.LockNextInstances(f.ctx, t0, lease, 0, nil); err == nil {
		f.t.Error("LockNextInstances with max 0 returned no error")
	}

	f.commit(turn(items[0], started("i1", input("i1")), scheduled("Charge"), scheduled("Ship"), scheduled("Notify")))
	ws, err := f.s.LockNextActivities(f.ctx, t0, lease, 2, nil)
	f.must(err, "LockNextActivities")
	if len(ws) != 2 || ws[0].Task.Name != "Charge" || ws[1].Task.Name != "Ship" {
		f.t.Fatalf("LockNextActivities with max 2 leased %d tasks (%+v); want the two oldest, Charge and Ship", len(ws), ws)
	}
	if names := f.activities(t0); !slices.Equal(names, []string{"Notify"}) {
		f.t.Fatalf("the next leases got %q; want what was left, [Notify]", names)
	}
	if _, err := f.s.LockNextActivities(f.ctx, t0, lease, 0, nil); err == nil {
		f.t.Error("LockNextActivities with max 0 returned no error")
	}
}

// testActivitiesFairAcrossInstances: activity tasks are leased fairly
// across instances: an instance that schedules many at once takes turns
// with one that schedules later, which does not wait for the whole
// backlog; each instance's tasks come in the order it scheduled them.
func testActivitiesFairAcrossInstances(f *fixture) {
	f.create("burst")
	f.create("hello")
	burst := []engine.Event{started("burst", input("burst"))}
	for i := range 6 {
		burst = append(burst, scheduled(fmt.Sprintf("B%d", i)))
	}
	f.commit(turn(f.lockID(t0, "burst"), burst...))
	ws, err := f.s.LockNextActivities(f.ctx, t0, lease, 2, nil)
	f.must(err, "LockNextActivities")
	if len(ws) != 2 || ws[0].Task.Name != "B0" || ws[1].Task.Name != "B1" {
		f.t.Fatalf("LockNextActivities with max 2 leased %+v; want B0 and B1", ws)
	}
	f.commit(turn(f.lockID(t0, "hello"), started("hello", input("hello")), scheduled("H0"), scheduled("H1")))
	if names := f.activities(t0); !slices.Equal(names, []string{"B2", "H0", "B3", "H1", "B4", "B5"}) {
		f.t.Fatalf("the tasks were leased in the order %q; want the two instances in turn, [B2 H0 B3 H1 B4 B5]", names)
	}
}

// testHasWork: an instance has work while it has messages visible at the
// time asked about, locked or not.
func testHasWork(f *fixture) {
	has := func(when string, now time.Time, want bool) {
		f.t.Helper()
		got, err := f.s.HasWork(f.ctx, "i1", now)
		f.must(err, "HasWork")
		if got != want {
			f.t.Fatalf("HasWork %s = %v; want %v", when, got, want)
		}
	}
	f.create("i1")
	has("with its start waiting", t0, true)
	item := f.lock(t0)
	has("while it is locked, with its start", t0, true)
	f.commit(turn(item, started("i1", input("i1")), timerCreated(t0.Add(time.Hour))))
	has("with a timer not yet due", t0, false)
	has("once the timer is due", t0.Add(time.Hour), true)
}

// testAbandon: an abandoned instance is handed out again at once, with its
// messages; Attempt counts the abandoned delivery.
func testAbandon(f *fixture) {
	f.create("i1")
	f.enqueue("i1", raised("Approve"))
	first := f.lock(t0)
	f.must(f.s.AbandonInstance(f.ctx, "i1", first.LockToken), "AbandonInstance")
	again := f.lock(t0)
	f.sameDelivery("abandoned instance i1", first.LockToken, again.LockToken, first.Attempt, again.Attempt)
	f.messages(again, started("i1", input("i1")), raised("Approve"))
	f.must(f.s.AbandonInstance(f.ctx, "i1", "not-the-lock-token"), "AbandonInstance with a wrong token")
	f.noWork(t0)
	f.wantErr(f.s.CommitTurn(f.ctx, turn(first, started("i1", input("i1")))), store.ErrLeaseLost, "CommitTurn with the abandoned lock's token")
}

// withActivity runs i1's first turn, which schedules the activity "Charge"
// (event 2).
func (f *fixture) withActivity() {
	f.t.Helper()
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"))
}

// testActivityLease: a leased task is not handed out again before its lease
// expires and is after, with a new token; the worker whose lease was handed
// on cannot complete it.
func testActivityLease(f *fixture) {
	f.withActivity()
	first := f.lease(t0)
	if first.InstanceID != "i1" || first.ExecutionID != 1 || first.ModuleHash != module || first.Task.ScheduleID != 2 ||
		first.Task.Name != "Charge" || string(first.Task.Input) != `"Charge"` || first.Attempt != 1 {
		f.t.Fatalf("task %+v; want Charge(\"Charge\") of event 2 of i1, execution 1, on %s, Attempt 1", first, module)
	}
	f.noActivity(t0.Add(lease - time.Second))
	again := f.lease(t0.Add(lease + time.Second))
	if again.ID != first.ID || again.Task.ScheduleID != 2 {
		f.t.Fatalf("task %d (event %d) delivered; want task %d again", again.ID, again.Task.ScheduleID, first.ID)
	}
	f.sameDelivery("activity task", first.LockToken, again.LockToken, first.Attempt, again.Attempt)
	f.wantErr(f.s.CompleteActivity(f.ctx, first, activityCompleted(2, `"first"`), t0), store.ErrLeaseLost, "CompleteActivity by the worker whose lease was handed on")
	f.must(f.s.CompleteActivity(f.ctx, again, activityCompleted(2, `"again"`), t0), "CompleteActivity")
	f.noActivity(t0.Add(time.Hour))
	f.messages(f.lock(t0.Add(lease+time.Second)), activityCompleted(2, `"again"`))
}

// testActivityLeaseExtended: a lease extended before it expires holds the
// task past its first expiry; one handed on cannot be extended.
func testActivityLeaseExtended(f *fixture) {
	f.withActivity()
	first := f.lease(t0)
	f.must(f.s.ExtendLease(f.ctx, first, t0.Add(lease/2), lease), "ExtendLease")
	f.noActivity(t0.Add(lease + time.Second))
	again := f.lease(t0.Add(lease/2 + lease + time.Second))
	f.sameDelivery("activity task", first.LockToken, again.LockToken, first.Attempt, again.Attempt)
	f.wantErr(f.s.ExtendLease(f.ctx, first, t0.Add(2*lease), lease), store.ErrLeaseLost, "ExtendLease by the worker whose lease was handed on")
	f.must(f.s.CompleteActivity(f.ctx, again, activityCompleted(2, `"again"`), t0), "CompleteActivity")
	f.wantErr(f.s.ExtendLease(f.ctx, again, t0, lease), store.ErrLeaseLost, "ExtendLease of a completed task")
}

// testActivityTimeout: the deadline an orchestration set for an activity
// call (durabox.WithTimeout) is in its history event and comes back with
// the task, which carries none when the call set none.
func testActivityTimeout(f *fixture) {
	f.create("i1")
	timed := scheduled("Charge")
	timed.TimeoutMs = 1500
	events := f.run("i1", t0, started("i1", input("i1")), timed, scheduled("Refund"))
	f.history("i1", 1, events)
	got := map[string]time.Duration{}
	for range 2 {
		w := f.lease(t0)
		got[w.Task.Name] = w.Task.Timeout
	}
	if want := map[string]time.Duration{"Charge": 1500 * time.Millisecond, "Refund": 0}; !maps.Equal(got, want) {
		f.t.Fatalf("the leased tasks' timeouts are %v; want %v", got, want)
	}
}

// testActivityCompletedOnce: an activity that ran twice, or whose
// completion arrives twice, records one result.
func testActivityCompletedOnce(f *fixture) {
	f.withActivity()
	slow := f.lease(t0)
	fast := f.lease(t0.Add(lease + time.Second))
	f.must(f.s.CompleteActivity(f.ctx, fast, activityCompleted(2, `"fast"`), t0), "CompleteActivity")
	f.wantErr(f.s.CompleteActivity(f.ctx, fast, activityCompleted(2, `"fast"`), t0), store.ErrLeaseLost, "a second CompleteActivity of the same delivery")
	f.wantErr(f.s.CompleteActivity(f.ctx, slow, activityCompleted(2, `"slow"`), t0), store.ErrLeaseLost, "CompleteActivity of a task completed by another delivery")
	f.noActivity(t0.Add(time.Hour))
	f.messages(f.lock(t0.Add(lease+time.Second)), activityCompleted(2, `"fast"`))
}

// testActivityResultForAnotherSchedule: a result that names another event
// than the task's is refused, and the task stays.
func testActivityResultForAnotherSchedule(f *fixture) {
	f.withActivity()
	w := f.lease(t0)
	if err := f.s.CompleteActivity(f.ctx, w, activityCompleted(3, `"wrong"`), t0); err == nil {
		f.t.Fatal("CompleteActivity with a result for event 3 of a task of event 2 succeeded; want it refused")
	}
	f.noWork(t0)
	f.must(f.s.CompleteActivity(f.ctx, w, activityCompleted(2, `"right"`), t0), "CompleteActivity after a refused result")
	f.messages(f.lock(t0), activityCompleted(2, `"right"`))
}

// testReleaseAllLeases: after ReleaseAllLeases, locked instances and leased
// tasks are handed out again at once, and the old tokens are void.
func testReleaseAllLeases(f *fixture) {
	f.withActivity()
	f.enqueue("i1", raised("Approve"))
	item := f.lock(t0)
	w := f.lease(t0)
	f.must(f.s.ReleaseAllLeases(f.ctx), "ReleaseAllLeases")
	again := f.lock(t0)
	f.sameDelivery("instance i1", item.LockToken, again.LockToken, item.Attempt, again.Attempt)
	wAgain := f.lease(t0)
	f.sameDelivery("activity task", w.LockToken, wAgain.LockToken, w.Attempt, wAgain.Attempt)
	f.wantErr(f.s.CompleteActivity(f.ctx, w, activityCompleted(2, `"old"`), t0), store.ErrLeaseLost, "CompleteActivity with a released lease")
	f.wantErr(f.s.CommitTurn(f.ctx, turn(item, raised("Approve"))), store.ErrLeaseLost, "CommitTurn with a released lock")
}
