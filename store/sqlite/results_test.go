package sqlite

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestResultsRideTheNextTurn: an activity's result costs no write of its
// own; the instance is told it has work, gets the result as a message, and
// the commit of its turn removes the task.
func TestResultsRideTheNextTurn(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	withTasks(t, s)
	w := leaseActivity(t, s, t0, time.Minute)
	done := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID, Result: json.RawMessage(`"ok"`)}
	writes := s.batches.Load()
	if err := s.CompleteActivity(ctx, w, done, t0); err != nil {
		t.Fatal(err)
	}
	if n := s.batches.Load() - writes; n != 0 {
		t.Fatalf("completing an activity took %d transactions, want none", n)
	}
	if more, err := s.HasWork(ctx, "i1", t0); err != nil || !more {
		t.Fatalf("HasWork = %v, %v after a result; want true", more, err)
	}
	if q, err := s.QueueStats(ctx, t0); err != nil || q.Ready != 1 || q.ReadyInstances != 1 || q.Running != 0 || q.Activities != 1 {
		t.Fatalf("QueueStats = %+v, %v; want the result ready, B waiting, nothing running", q, err)
	}
	item := lock(t, s, t0)
	if got := messageEvents(item.Messages); !reflect.DeepEqual(got, []engine.Event{done}) {
		t.Fatalf("messages %+v, want the result", got)
	}
	result := event(4, engine.ActivityCompleted)
	result.ScheduleID = w.Task.ScheduleID
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, NewEvents: []engine.Event{result},
		Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
	if n := count(t, s, "activity_tasks"); n != 1 {
		t.Fatalf("%d tasks after the turn took the result, want 1 (B)", n)
	}
	noWork(t, s, t0)
	if s.results.has("i1") || s.results.bytes != 0 {
		t.Fatal("the result is still kept after its turn committed")
	}
}

// TestResultsLostInACrashRunAgain: a result kept when the store ends is
// gone, and its task is delivered again, counted.
func TestResultsLostInACrashRunAgain(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crash.db")
	s := openAt(t, path, Options{})
	withInstance(t, s)
	withTasks(t, s)
	w := leaseActivity(t, s, t0, time.Minute)
	if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID}, t0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path, Options{})
	noWork(t, s, t0)
	again := leaseActivity(t, s, t0, time.Minute)
	if again.ID != w.ID || again.Attempt != 2 {
		t.Fatalf("after the restart: task %d, Attempt %d; want %d, 2", again.ID, again.Attempt, w.ID)
	}
}

// TestResultsKeepTheirPlace: a result comes among its instance's messages
// where its message would have been stored.
func TestResultsKeepTheirPlace(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	withTasks(t, s)
	a := leaseActivity(t, s, t0, time.Minute)
	b := leaseActivity(t, s, t0, time.Minute)
	raise := func(name string, at time.Time) engine.Event {
		ev := engine.Event{Kind: engine.ExternalEvent, Name: name, Result: json.RawMessage(`1`)}
		if err := s.Enqueue(ctx, "i1", ev, at, nil); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	complete := func(w *store.ActivityWork, at time.Time) engine.Event {
		ev := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID}
		if err := s.CompleteActivity(ctx, w, ev, at); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	want := []engine.Event{raise("first", t0), complete(a, t0.Add(time.Second)), raise("second", t0.Add(2*time.Second)), complete(b, t0.Add(3*time.Second))}
	if got := messageEvents(lock(t, s, t0.Add(time.Minute)).Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("messages %+v\nwant %+v", got, want)
	}
}

// TestResultsForAnEndedExecutionDrop: a result that comes while its
// instance's turn continues it as new is not handed to the next execution,
// and its task goes.
func TestResultsForAnEndedExecutionDrop(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	withTasks(t, s)
	w := leaseActivity(t, s, t0, time.Minute)
	if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "Restart"}, t0, nil); err != nil {
		t.Fatal(err)
	}
	item := lock(t, s, t0)
	if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID}, t0); err != nil {
		t.Fatal(err)
	}
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: []engine.Event{event(4, engine.OrchestrationContinuedAsNew)}, Status: engine.StatusContinuedAsNew, Consumed: []int64{item.Messages[0].ID},
		ContinueAsNew: &engine.ContinueAsNew{Started: engine.StartMessage("i1", "Greeting", nil)}})
	next := lock(t, s, t0)
	if got := messageEvents(next.Messages); len(got) != 1 || got[0].Kind != engine.OrchestrationStarted {
		t.Fatalf("the next execution's messages: %+v; want its start alone", got)
	}
	if s.results.has("i1") {
		t.Fatal("the ended execution's result is still kept")
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM activity_tasks WHERE id = ?`, w.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the ended execution's completed task: %d rows, %v; want it gone", n, err)
	}
}
