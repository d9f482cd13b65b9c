package sqlite

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestMessagesAfterNoneVisible: once the store has learnt that no message
// is visible (first.go), each way a message can arrive still makes its
// instance's work found, and a timer is found when it comes due.
func TestMessagesAfterNoneVisible(t *testing.T) {
	t.Parallel()
	// waiting leaves "i1" after its first turn, its activity leased: the
	// store knows that nothing is visible before the timer.
	waiting := func(t *testing.T) (*Store, *store.ActivityWork) {
		s, _ := openTest(t)
		withInstance(t, s)
		firstTurn(t, s)
		w := leaseActivity(t, s, t0, time.Minute)
		noWork(t, s, t0)
		if more, err := s.HasWork(ctx, "i1", t0); more || err != nil {
			t.Fatalf("HasWork = %v, %v; want false", more, err)
		}
		return s, w
	}
	for _, c := range []struct {
		name string
		// arrive makes a message for instance id arrive.
		arrive func(t *testing.T, s *Store, w *store.ActivityWork) (id string)
	}{
		{"an event raised", func(t *testing.T, s *Store, w *store.ActivityWork) string {
			if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "go"}, t0, nil); err != nil {
				t.Fatal(err)
			}
			return "i1"
		}},
		{"an instance started", func(t *testing.T, s *Store, w *store.ActivityWork) string {
			create(t, s, "i2")
			return "i2"
		}},
		{"an activity result too large to keep", func(t *testing.T, s *Store, w *store.ActivityWork) string {
			result := event(4, engine.ActivityCompleted)
			result.ScheduleID, result.Result = 2, json.RawMessage(`"`+strings.Repeat("x", pendingResultMax)+`"`)
			if err := s.CompleteActivity(ctx, w, result, t0); err != nil {
				t.Fatal(err)
			}
			if count(t, s, "messages") != 2 {
				t.Fatal("the result was not written as a message")
			}
			return "i1"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, w := waiting(t)
			id := c.arrive(t, s, w)
			if more, err := s.HasWork(ctx, id, t0); !more || err != nil {
				t.Fatalf("HasWork(%q) = %v, %v; want true", id, more, err)
			}
			if item := lock(t, s, t0); item.Instance.ID != id || len(item.Messages) != 1 {
				t.Fatalf("locked %q with %d messages; want %q with 1", item.Instance.ID, len(item.Messages), id)
			}
		})
	}
	t.Run("a timer come due", func(t *testing.T) {
		s, _ := waiting(t)
		// Past the activity's lease, the timer is what comes next.
		if next, ok, err := s.NextVisibleAt(ctx, t0.Add(time.Hour/2)); !ok || err != nil || !next.Equal(timerDue) {
			t.Fatalf("NextVisibleAt = %v, %v, %v; want %v", next, ok, err, timerDue)
		}
		noWork(t, s, timerDue.Add(-time.Nanosecond))
		if item := lock(t, s, timerDue); len(item.Messages) != 1 || item.Messages[0].Event.Kind != engine.TimerFired {
			t.Fatalf("messages at the timer's time: %+v", item.Messages)
		}
	})
}

// TestNoReadWhileNoMessageIsVisible: an instance whose activity results
// wait in memory takes turn after turn without the store reading for
// messages, as long as none comes.
func TestNoReadWhileNoMessageIsVisible(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	firstTurn(t, s)
	noWork(t, s, t0)
	at := s.first.at
	for i := int64(0); i < 3; i++ {
		w := leaseActivity(t, s, t0, time.Minute)
		result := event(4+2*i, engine.ActivityCompleted)
		result.ScheduleID = w.Task.ScheduleID
		if err := s.CompleteActivity(ctx, w, result, t0); err != nil {
			t.Fatal(err)
		}
		item := lock(t, s, t0)
		if len(item.Messages) != 1 || item.Messages[0].Event.Kind != engine.ActivityCompleted {
			t.Fatalf("turn %d's messages: %+v", i, item.Messages)
		}
		scheduled := event(5+2*i, engine.ActivityScheduled)
		scheduled.Name = "SayHello"
		commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
			NewEvents:  []engine.Event{result, scheduled},
			Activities: []engine.ActivityTask{{ScheduleID: scheduled.ID, Name: "SayHello"}},
			Status:     engine.StatusRunning,
			Consumed:   []int64{item.Messages[0].ID},
		})
		if more, err := s.HasWork(ctx, "i1", t0); more || err != nil {
			t.Fatalf("HasWork after turn %d = %v, %v; want false", i, more, err)
		}
		noWork(t, s, t0)
	}
	if s.first.at != at {
		t.Errorf("the store read the first message again (at %d, then %d): commits that add no message made it", at, s.first.at)
	}
}
