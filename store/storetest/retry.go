package storetest

import (
	"reflect"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testActivityRetry: a task let go for a retry (RetryActivity) comes back
// with its retry policy, its failures counted and the last of them, not
// before the time it was given, which NextVisibleAt names; its instance
// hears nothing meanwhile, and the old lease can neither retry nor
// complete it again.
func testActivityRetry(f *fixture) {
	policy := &engine.RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 10_000, BackoffThousandths: 1500, NonRetryable: []string{"Declined"}}
	charge := scheduled("Charge")
	charge.Retry = policy
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), charge)
	first := f.lease(t0)
	if first.Failures != 0 || first.LastFailure != nil || first.Attempt != 1 || !reflect.DeepEqual(first.Task.Retry, policy) {
		f.t.Fatalf("first delivery: failures %d, last failure %+v, attempt %d, policy %+v; want 0, nil, 1 and %+v",
			first.Failures, first.LastFailure, first.Attempt, first.Task.Retry, policy)
	}
	failure := &engine.Failure{Message: "the bank is busy", Type: "Busy"}
	visible := t0.Add(10 * time.Second)
	f.must(f.s.RetryActivity(f.ctx, first, failure, visible), "RetryActivity")
	f.wantErr(f.s.RetryActivity(f.ctx, first, failure, visible), store.ErrLeaseLost, "a second RetryActivity of the same delivery")
	f.wantErr(f.s.CompleteActivity(f.ctx, first, activityCompleted(2, `"late"`), t0), store.ErrLeaseLost, "CompleteActivity of a delivery already retried")
	next, ok, err := f.s.NextVisibleAt(f.ctx, t0)
	f.must(err, "NextVisibleAt")
	if !ok || !next.Equal(visible) {
		f.t.Fatalf("NextVisibleAt = %s, %t; want %s, when the retried task is due", clock(next), ok, clock(visible))
	}
	tasks, err := f.s.ActivityTasks(f.ctx, "i1", visible.Add(-time.Second), 10)
	f.must(err, "ActivityTasks")
	if len(tasks) != 1 || tasks[0].Failures != 1 || !reflect.DeepEqual(tasks[0].LastFailure, failure) || !tasks[0].RetryAt.Equal(visible) || tasks[0].Running {
		f.t.Fatalf("ActivityTasks while the retry waits = %+v; want Charge, 1 failure (%+v), its retry at %s", tasks, failure, clock(visible))
	}
	if tasks, err := f.s.ActivityTasks(f.ctx, "i1", visible, 10); err != nil || len(tasks) != 1 || !tasks[0].RetryAt.IsZero() {
		f.t.Fatalf("ActivityTasks once the retry is due = %+v, %v; want no retry time", tasks, err)
	}
	f.noActivity(visible.Add(-time.Second))
	f.noWork(visible)
	f.retryingStats(visible.Add(-time.Second), 1, 0, nil)
	f.retryingStats(visible.Add(time.Second), 0, 1, &store.WaitingItem{InstanceID: "i1", What: "Charge", Since: visible})
	second := f.lease(visible)
	if second.ID != first.ID || second.Failures != 1 || !reflect.DeepEqual(second.LastFailure, failure) || second.Attempt != 1 ||
		!reflect.DeepEqual(second.Task.Retry, policy) || second.LockToken == first.LockToken {
		f.t.Fatalf("delivery after the retry: task %d, failures %d, last failure %+v, attempt %d, policy %+v; want task %d, 1, %+v, 1, %+v, a new token",
			second.ID, second.Failures, second.LastFailure, second.Attempt, second.Task.Retry, first.ID, failure, policy)
	}
	// A delivery lost after a retry is delivered again, with the failures
	// still counted and a second delivery.
	third := f.lease(visible.Add(lease + time.Second))
	if third.ID != first.ID || third.Failures != 1 || third.Attempt != 2 {
		f.t.Fatalf("delivery after an expired lease: task %d, failures %d, attempt %d; want task %d, 1, 2", third.ID, third.Failures, third.Attempt, first.ID)
	}
	f.must(f.s.RetryActivity(f.ctx, third, &engine.Failure{Message: "still busy"}, visible.Add(lease+time.Hour)), "RetryActivity of the third delivery")
	fourth := f.lease(visible.Add(lease + time.Hour))
	if fourth.Failures != 2 || fourth.LastFailure == nil || fourth.LastFailure.Message != "still busy" || fourth.Attempt != 1 {
		f.t.Fatalf("delivery after a second retry: failures %d, last failure %+v, attempt %d; want 2, \"still busy\", 1", fourth.Failures, fourth.LastFailure, fourth.Attempt)
	}
	final := engine.Event{Kind: engine.ActivityFailed, ScheduleID: 2, Failure: &engine.Failure{Message: "declined", Type: "Declined"}, Attempts: 3}
	f.must(f.s.CompleteActivity(f.ctx, fourth, final, t0), "CompleteActivity of the last attempt")
	f.noActivity(t0.Add(24 * time.Hour))
	f.messages(f.lock(t0.Add(24*time.Hour)), final)
}

// testActivityRetryPurged: a task purged with its instance while its
// attempt runs cannot be retried.
func testActivityRetryPurged(f *fixture) {
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"), engine.Event{Kind: engine.OrchestrationTerminated, Reason: "done"})
	w := f.lease(t0)
	f.must(f.s.Purge(f.ctx, "i1"), "Purge")
	if err := f.s.RetryActivity(f.ctx, w, &engine.Failure{Message: "busy"}, t0.Add(time.Second)); err == nil {
		f.t.Fatal("RetryActivity of a purged task succeeded; want an error")
	}
	f.noActivity(t0.Add(time.Hour))
}

// retryingStats fails the test unless QueueStats at now counts retrying
// tasks waiting for their retry and waiting tasks waiting for a worker,
// the oldest of them oldest.
func (f *fixture) retryingStats(now time.Time, retrying, waiting int, oldest *store.WaitingItem) {
	f.t.Helper()
	q, err := f.s.QueueStats(f.ctx, now)
	f.must(err, "QueueStats")
	if q.Retrying != retrying || q.Activities != waiting || !reflect.DeepEqual(q.OldestActivity, oldest) {
		f.t.Fatalf("QueueStats at %s: %d retrying, %d waiting, the oldest %+v; want %d, %d, %+v", clock(now), q.Retrying, q.Activities, q.OldestActivity, retrying, waiting, oldest)
	}
}

// testRetriesDropped: a commit that cancels an activity drops its task
// waiting for a retry, and one that ends the execution drops them all;
// the other tasks stay.
func testRetriesDropped(f *fixture) {
	policy := &engine.RetryPolicy{MaximumAttempts: 5, InitialIntervalMs: 3_600_000}
	retried := func(name string) engine.Event {
		ev := scheduled(name)
		ev.Retry = policy
		return ev
	}
	f.create("i1")
	events := f.run("i1", t0, started("i1", input("i1")), retried("Charge"), retried("Refund"), retried("Notify"), scheduled("Log"))
	due := t0.Add(time.Hour)
	for range 3 {
		w := f.lease(t0)
		f.must(f.s.RetryActivity(f.ctx, w, &engine.Failure{Message: "busy"}, due), "RetryActivity of "+w.Task.Name)
	}
	log := f.lease(t0)
	if log.Task.Name != "Log" {
		f.t.Fatalf("leased %s; want Log, the only task not waiting for a retry", log.Task.Name)
	}
	f.must(f.s.CompleteActivity(f.ctx, log, activityCompleted(log.Task.ScheduleID, `"logged"`), t0), "CompleteActivity of Log")
	f.run("i1", t0, engine.Event{Kind: engine.ActivityCancelRequested, ScheduleID: events[1].ID})
	got := f.activities(due)
	slices.Sort(got)
	if !slices.Equal(got, []string{"Notify", "Refund"}) {
		f.t.Fatalf("tasks leased once the retries are due: %v; want Notify and Refund, not the cancelled Charge", got)
	}
}

// testRetriesDroppedAtTheEnd: a commit that ends the execution drops its
// tasks waiting for a retry, and leaves those a worker holds.
func testRetriesDroppedAtTheEnd(f *fixture) {
	charge := scheduled("Charge")
	charge.Retry = &engine.RetryPolicy{MaximumAttempts: 5, InitialIntervalMs: 3_600_000}
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), charge, scheduled("Log"))
	w := f.lease(t0)
	f.must(f.s.RetryActivity(f.ctx, w, &engine.Failure{Message: "busy"}, t0.Add(time.Hour)), "RetryActivity")
	log := f.lease(t0)
	f.enqueue("i1", raised("Stop"))
	f.run("i1", t0, completed(`"done"`))
	f.must(f.s.CompleteActivity(f.ctx, log, activityCompleted(log.Task.ScheduleID, `"logged"`), t0), "CompleteActivity of the task a worker held")
	f.noActivity(t0.Add(2 * time.Hour))
}
