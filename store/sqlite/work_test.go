package sqlite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestInstanceOrder checks the order instances are handed out in: those
// that have begun by their oldest visible message, where a timer that came
// due waits for the messages older than it, not for the ones after it;
// then new ones by their start.
func TestInstanceOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		now  time.Time
		want []string
	}{
		{"timer not due", timerDue.Add(-time.Nanosecond), []string{"b", "before", "after"}},
		{"timer due", timerDue, []string{"i1", "b", "before", "after"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			withInstance(t, s)
			create(t, s, "b")
			create(t, s, "before")
			firstTurn(t, s) // i1's timer comes after before's start
			// b begins, and an event for it comes after i1's timer: once
			// the timer is due, i1 comes first.
			item := lock(t, s, t0)
			if item.Instance.ID != "b" {
				t.Fatalf("locked %s first; want b, the oldest new instance", item.Instance.ID)
			}
			commit(t, s, store.TurnCommit{InstanceID: "b", ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning,
				NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Consumed: []int64{item.Messages[0].ID}})
			if err := s.Enqueue(ctx, "b", engine.Event{Kind: engine.ExternalEvent, Name: "Go"}, t0, nil); err != nil {
				t.Fatal(err)
			}
			create(t, s, "after")
			var got []string
			for {
				item, err := lockNext(s, tt.now, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				if item == nil {
					break
				}
				got = append(got, item.Instance.ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("handed out %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWorkItem checks what a locked instance comes with: its history and
// every visible message, oldest first, whatever their kind.
func TestWorkItem(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	events := firstTurn(t, s)
	raised := engine.Event{Kind: engine.ExternalEvent, Name: "Approve", Result: json.RawMessage(`true`)}
	if err := s.Enqueue(ctx, "i1", raised, t0, nil); err != nil {
		t.Fatal(err)
	}
	// A turn that consumes nothing and starts a second timer, due later.
	item := lock(t, s, t0)
	later := event(4, engine.TimerCreated)
	laterDue := timerDue.Add(time.Hour)
	later.FireAt = &laterDue
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: []engine.Event{later}, Timers: []engine.TimerTask{{ScheduleID: 4, FireAt: laterDue}}, Status: engine.StatusRunning})
	w := leaseActivity(t, s, t0, time.Minute)
	activityDone := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2, Result: json.RawMessage(`"hello"`)}
	if err := s.CompleteActivity(ctx, w, activityDone, t0); err != nil {
		t.Fatal(err)
	}

	item = lock(t, s, timerDue)
	wantMessages := []engine.Event{{Kind: engine.TimerFired, ScheduleID: 3, FireAt: &timerDue}, raised, activityDone}
	if got := messageEvents(item.Messages); !reflect.DeepEqual(got, wantMessages) {
		t.Fatalf("messages %+v\nwant %+v", got, wantMessages)
	}
	if want := int64(len(events) + 1); item.HistoryLen != want {
		t.Fatalf("history length %d, want %d", item.HistoryLen, want)
	}
	if item.Instance.ID != "i1" || item.Instance.Status != engine.StatusRunning || item.LockToken == "" {
		t.Fatalf("instance %+v, token %q", item.Instance, item.LockToken)
	}
}

func TestTimers(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	firstTurn(t, s)
	noWork(t, s, timerDue.Add(-time.Nanosecond))
	if next, ok, err := s.NextVisibleAt(ctx, t0); err != nil || !ok || !next.Equal(timerDue) || next.Location() != time.UTC {
		t.Fatalf("NextVisibleAt = %v, %v, %v; want %v", next, ok, err, timerDue)
	}
	item := lock(t, s, timerDue)
	want := []engine.Event{{Kind: engine.TimerFired, ScheduleID: 3, FireAt: &timerDue}}
	if got := messageEvents(item.Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("messages %+v, want %+v", got, want)
	}
}

// TestTimerDueBefore1970 checks that a timer due at or before the zero of
// Unix time is not taken for a message visible at once, nor lost.
func TestTimerDueBefore1970(t *testing.T) {
	t.Parallel()
	for _, due := range []time.Time{time.Unix(0, 0).UTC(), time.Unix(-1, 0).UTC()} {
		t.Run(due.String(), func(t *testing.T) {
			s, _ := openTest(t)
			withInstance(t, s)
			item := lock(t, s, t0)
			commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
				NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Timers: []engine.TimerTask{{ScheduleID: 1, FireAt: due}},
				Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
			item = lock(t, s, t0)
			if want := []engine.Event{{Kind: engine.TimerFired, ScheduleID: 1, FireAt: &due}}; !reflect.DeepEqual(messageEvents(item.Messages), want) {
				t.Fatalf("messages %+v, want %+v", messageEvents(item.Messages), want)
			}
		})
	}
}

// TestConcurrentLocks checks that workers locking at once never get the
// same instance.
func TestConcurrentLocks(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	for i := range 49 {
		create(t, s, fmt.Sprint(i))
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				item, err := lockNext(s, t0, time.Hour)
				if err != nil {
					t.Error(err)
				}
				if item == nil {
					return
				}
				mu.Lock()
				got[item.Instance.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != 50 {
		t.Fatalf("%d instances handed out, want 50", len(got))
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("%s handed out %d times", id, n)
		}
	}
}

func TestInstanceLease(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	first := lock(t, s, t0)
	noWork(t, s, t0.Add(time.Minute-time.Nanosecond))
	if next, ok, err := s.NextVisibleAt(ctx, t0); err != nil || !ok || !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("NextVisibleAt = %v, %v, %v; want the lock's expiry", next, ok, err)
	}
	second := lock(t, s, t0.Add(time.Minute))
	if second.LockToken == first.LockToken || !reflect.DeepEqual(second.Messages, first.Messages) {
		t.Fatalf("after expiry: %+v\nfirst: %+v", second, first)
	}
	noWork(t, s, t0.Add(time.Minute))
	if first.Attempt != 1 || second.Attempt != 2 {
		t.Fatalf("attempts %d then %d, want 1 then 2", first.Attempt, second.Attempt)
	}
}

// TestAttemptsCountUntilCommit counts the deliveries of a turn across
// expired locks and abandons, and starts again after a commit.
func TestAttemptsCountUntilCommit(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	now := t0
	var item *store.WorkItem
	for want := 1; want <= 3; want++ {
		item = lock(t, s, now)
		if item.Attempt != want {
			t.Fatalf("delivery %d has Attempt %d", want, item.Attempt)
		}
		now = now.Add(time.Minute)
	}
	if err := s.AbandonInstance(ctx, "i1", item.LockToken); err != nil {
		t.Fatal(err)
	}
	if item = lock(t, s, now); item.Attempt != 4 {
		t.Fatalf("after an abandon, Attempt %d, want 4", item.Attempt)
	}
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)},
		Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
	if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "E"}, t0, nil); err != nil {
		t.Fatal(err)
	}
	if item = lock(t, s, now); item.Attempt != 1 {
		t.Fatalf("after a commit, Attempt %d, want 1", item.Attempt)
	}
}

func TestAbandonInstance(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	item := lock(t, s, t0)
	if err := s.AbandonInstance(ctx, "i1", "not the token"); err != nil {
		t.Fatal(err)
	}
	noWork(t, s, t0)
	if err := s.AbandonInstance(ctx, "i1", item.LockToken); err != nil {
		t.Fatal(err)
	}
	again := lock(t, s, t0)
	if !reflect.DeepEqual(again.Messages, item.Messages) {
		t.Fatalf("messages after abandon %+v, want %+v", again.Messages, item.Messages)
	}
}

func TestNextVisibleAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func(t *testing.T, s *Store)
		want  time.Time // zero: none
	}{
		{"empty", func(t *testing.T, s *Store) {}, time.Time{}},
		{"only work visible now", func(t *testing.T, s *Store) { withInstance(t, s) }, time.Time{}},
		{"a timer", func(t *testing.T, s *Store) {
			withInstance(t, s)
			firstTurn(t, s)
			leaseActivity(t, s, t0, 3*time.Hour)
		}, timerDue},
		{"a locked instance with work", func(t *testing.T, s *Store) {
			withInstance(t, s)
			lock(t, s, t0)
		}, t0.Add(time.Minute)},
		{"a leased activity", func(t *testing.T, s *Store) {
			withInstance(t, s)
			firstTurn(t, s)
			leaseActivity(t, s, t0, time.Second)
		}, t0.Add(time.Second)},
		{"the earliest of all", func(t *testing.T, s *Store) {
			withInstance(t, s)
			firstTurn(t, s)
			leaseActivity(t, s, t0, 2*time.Hour)
			create(t, s, "i2")
			if _, err := lockNext(s, t0, 30*time.Minute); err != nil {
				t.Fatal(err)
			}
		}, t0.Add(30 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			tt.build(t, s)
			next, ok, err := s.NextVisibleAt(ctx, t0)
			if err != nil || ok != !tt.want.IsZero() || !next.Equal(tt.want) {
				t.Fatalf("NextVisibleAt = %v, %v, %v; want %v", next, ok, err, tt.want)
			}
		})
	}
}

func TestReleaseAllLeases(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	firstTurn(t, s)
	first := leaseActivity(t, s, t0, time.Hour)
	if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "X"}, t0, nil); err != nil {
		t.Fatal(err)
	}
	lock(t, s, t0)
	if err := s.ReleaseAllLeases(ctx); err != nil {
		t.Fatal(err)
	}
	lock(t, s, t0)
	again, err := leaseNext(s, t0, time.Hour)
	if err != nil || again == nil || again.ID != first.ID || again.Attempt != 2 {
		t.Fatalf("activity after release: %+v, %v", again, err)
	}
}
