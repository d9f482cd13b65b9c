package sqlite

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// withTasks gives "i1" (see withInstance) activity tasks for events 2 and 3.
func withTasks(t *testing.T, s *Store) {
	t.Helper()
	item := lock(t, s, t0)
	a, b := event(2, engine.ActivityScheduled), event(3, engine.ActivityScheduled)
	a.Name, b.Name = "A", "B"
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents:  []engine.Event{event(1, engine.OrchestrationStarted), a, b},
		Activities: []engine.ActivityTask{{ScheduleID: 2, Name: "A", Input: json.RawMessage(`"a"`)}, {ScheduleID: 3, Name: "B"}},
		Status:     engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
}

func TestActivityOrderAndLeases(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	withTasks(t, s)
	a := leaseActivity(t, s, t0, time.Minute)
	b := leaseActivity(t, s, t0.Add(time.Second), time.Minute)
	if a.Task.Name != "A" || string(a.Task.Input) != `"a"` || b.Task.Name != "B" || b.Task.Input != nil {
		t.Fatalf("tasks %+v, %+v; want A then B", a, b)
	}
	if w, err := leaseNext(s, t0.Add(time.Minute-time.Nanosecond), time.Minute); w != nil || err != nil {
		t.Fatalf("a leased task handed out again: %+v, %v", w, err)
	}
	again := leaseActivity(t, s, t0.Add(time.Minute), time.Minute)
	want := *a
	want.Attempt, want.LockToken = 2, again.LockToken
	if !reflect.DeepEqual(*again, want) || again.LockToken == a.LockToken {
		t.Fatalf("redelivery %+v\nwant %+v", again, want)
	}
}

func TestCompleteActivity(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	withTasks(t, s)
	first := leaseActivity(t, s, t0, time.Minute)
	second := leaseActivity(t, s, t0.Add(2*time.Minute), time.Minute) // first's lease expired: A again
	if second.ID != first.ID {
		t.Fatalf("second lease is of task %d, want %d", second.ID, first.ID)
	}
	done := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2, Result: json.RawMessage(`"ok"`)}

	before := dump(t, s)
	tests := []struct {
		name string
		w    *store.ActivityWork
		ev   engine.Event
		is   error
		want string
	}{
		{"expired lease", first, done, store.ErrLeaseLost,
			`sqlite: complete activity 1 ("A" of "i1"): lease lost: it was handed to another worker or completed`},
		{"another task's result", second, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 3}, nil,
			`sqlite: complete activity 1: the result names event 3, the task's event is 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CompleteActivity(ctx, tt.w, tt.ev, t0)
			if err == nil || err.Error() != tt.want || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
			if after := dump(t, s); !reflect.DeepEqual(after, before) {
				t.Fatalf("the refused completion changed the store:\n%q\nwas\n%q", after, before)
			}
		})
	}

	if err := s.CompleteActivity(ctx, second, done, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteActivity(ctx, second, done, t0); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("completing twice: %v", err)
	}
	item := lock(t, s, t0)
	if got := messageEvents(item.Messages); !reflect.DeepEqual(got, []engine.Event{done}) {
		t.Fatalf("messages %+v, want the result", got)
	}
	// The result rides the turn (results.go): its task goes with the
	// turn's commit.
	if n := count(t, s, "activity_tasks"); n != 2 {
		t.Fatalf("%d tasks left before the turn that takes the result, want A's and B's", n)
	}
	result := event(4, engine.ActivityCompleted)
	result.ScheduleID = 2
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, NewEvents: []engine.Event{result},
		Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
	if n := count(t, s, "activity_tasks"); n != 1 {
		t.Fatalf("%d tasks left, want B's", n)
	}
}
