package sqlite

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

func TestCommitTurn(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	create(t, s, "other")
	events := firstTurn(t, s)
	if h, err := s.History(ctx, "i1", 0); err != nil || !reflect.DeepEqual(h, events) {
		t.Fatalf("history %+v, %v\nwant %+v", h, err, events)
	}
	w := leaseActivity(t, s, t0, time.Minute)
	want := &store.ActivityWork{ID: w.ID, InstanceID: "i1", ExecutionID: 1, ModuleHash: "h1",
		Task: engine.ActivityTask{ScheduleID: 2, Name: "SayHello", Input: json.RawMessage(`"world"`)}, Attempt: 1, LockToken: w.LockToken}
	if !reflect.DeepEqual(w, want) {
		t.Fatalf("activity %+v\nwant %+v", w, want)
	}

	// The second turn ends the instance. It consumes the fired timer and,
	// by mistake, a message of another instance, which stays.
	// (i1 has begun, so its timer comes before other's start.)
	item := lock(t, s, timerDue)
	other := lock(t, s, timerDue)
	if item.Instance.ID != "i1" || len(item.Messages) != 1 {
		t.Fatalf("work %+v", item)
	}
	done := event(5, engine.OrchestrationCompleted)
	done.Result = json.RawMessage(`"hello"`)
	custom := "greeted"
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: []engine.Event{event(4, engine.TimerFired), done},
		Status:    engine.StatusCompleted, Result: done.Result, CustomStatus: &custom,
		Consumed: []int64{item.Messages[0].ID, other.Messages[0].ID}})
	inst, err := s.GetInstance(ctx, "i1")
	if err != nil || inst.Status != engine.StatusCompleted || string(inst.Result) != `"hello"` || inst.Failure != nil || inst.CustomStatus != "greeted" {
		t.Fatalf("instance %+v, %v", inst, err)
	}
	if h, _ := s.History(ctx, "i1", 1); len(h) != 5 || !reflect.DeepEqual(h[3:], []engine.Event{event(4, engine.TimerFired), done}) {
		t.Fatalf("history %+v", h)
	}
	if n := count(t, s, "messages"); n != 1 {
		t.Fatalf("%d messages left, want the other instance's", n)
	}
	// The instance is unlocked and finished: an event raised now is
	// refused.
	if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "Late"}, t0, nil); !errors.Is(err, store.ErrFinished) {
		t.Fatalf("Enqueue for the finished instance: %v; want ErrFinished", err)
	}
	if err := s.AbandonInstance(ctx, "other", other.LockToken); err != nil {
		t.Fatal(err)
	}
	if item := lock(t, s, timerDue); item.Instance.ID != "other" {
		t.Fatalf("handed out %q, want other", item.Instance.ID)
	}
	noWork(t, s, timerDue)
	if n := count(t, s, "messages"); n != 1 {
		t.Fatalf("%d messages, want only the other instance's start", n)
	}
}

func TestCommitTurnFailure(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	firstTurn(t, s)
	item := lock(t, s, timerDue)
	failure := &engine.Failure{Message: "boom", Details: "at line 3"}
	failed := event(5, engine.OrchestrationFailed)
	failed.Failure = failure
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: []engine.Event{event(4, engine.TimerFired), failed},
		Status:    engine.StatusFailed, Failure: failure, Consumed: []int64{item.Messages[0].ID}})
	inst, err := s.GetInstance(ctx, "i1")
	if err != nil || inst.Status != engine.StatusFailed || !reflect.DeepEqual(inst.Failure, failure) || inst.Result != nil {
		t.Fatalf("instance %+v, %v", inst, err)
	}
}

// TestCommitIsAllOrNothing checks that a refused or failed commit leaves
// every table exactly as it was, and the instance locked as it was.
func TestCommitIsAllOrNothing(t *testing.T) {
	t.Parallel()
	fine := func(item *store.WorkItem) store.TurnCommit {
		sched := event(5, engine.ActivityScheduled)
		sched.Name = "SayHello"
		return store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
			NewEvents:  []engine.Event{event(4, engine.TimerFired), sched},
			Activities: []engine.ActivityTask{{ScheduleID: 5, Name: "SayHello"}},
			Timers:     []engine.TimerTask{{ScheduleID: 3, FireAt: timerDue.Add(time.Hour)}},
			Status:     engine.StatusRunning, Result: json.RawMessage(`1`),
			Consumed: []int64{item.Messages[0].ID},
			Children: []store.NewChild{{ID: "kid", Name: "Greeting", ModuleHash: "h1", ScheduleID: 5}},
		}
	}
	tests := []struct {
		name   string
		change func(c *store.TurnCommit)
		is     error
		want   string
	}{
		{"wrong lock token", func(c *store.TurnCommit) { c.LockToken = "stolen" },
			store.ErrLeaseLost, `sqlite: commit turn of "i1": lease lost: the instance is not locked with this token`},
		{"no such instance", func(c *store.TurnCommit) { c.InstanceID = "nope" },
			store.ErrNotFound, `sqlite: commit turn of "nope": instance "nope" not found`},
		{"first event id skips", func(c *store.TurnCommit) { c.NewEvents[0].ID, c.NewEvents[1].ID = 5, 6 },
			nil, `sqlite: commit turn of "i1": new event 0 has id 5 where history continues at 4`},
		{"first event id repeats", func(c *store.TurnCommit) { c.NewEvents[0].ID, c.NewEvents[1].ID = 3, 4 },
			nil, `sqlite: commit turn of "i1": new event 0 has id 3 where history continues at 4`},
		{"gap between new events", func(c *store.TurnCommit) { c.NewEvents[1].ID = 6 },
			nil, `sqlite: commit turn of "i1": new event 1 has id 6 where history continues at 5`},
		{"same id twice", func(c *store.TurnCommit) { c.NewEvents[1].ID = 4 },
			nil, `sqlite: commit turn of "i1": new event 1 has id 4 where history continues at 5`},
		{"another execution", func(c *store.TurnCommit) { c.ExecutionID = 2 },
			nil, `sqlite: commit turn of "i1": execution 2 is not the instance's current one, 1`},
		// Everything else is written by the time the outgoing message
		// fails: the transaction must undo it all.
		{"failure at the end", func(c *store.TurnCommit) {
			c.Outgoing = []store.Outgoing{{InstanceID: "kid", Event: engine.Event{Kind: engine.ExternalEvent, Result: json.RawMessage(`{not json`)}}}
		}, nil, `sqlite: commit turn of "i1": message for "kid": encode ExternalEvent message: json: error calling MarshalJSON for type json.RawMessage: invalid character 'n' looking for beginning of object key string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			withInstance(t, s)
			firstTurn(t, s)
			item := lock(t, s, timerDue)
			c := fine(item)
			tt.change(&c)
			before := dump(t, s)
			err := s.CommitTurn(ctx, c)
			if err == nil || err.Error() != tt.want || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
			if after := dump(t, s); !reflect.DeepEqual(after, before) {
				t.Fatalf("the failed commit changed the store:\n%q\nwas\n%q", after, before)
			}
			// The same commit, done right, goes through.
			commit(t, s, fine(item))
			if h, _ := s.History(ctx, "i1", 0); len(h) != 5 {
				t.Fatalf("history after the right commit: %+v", h)
			}
		})
	}
}

func TestLostLeaseIsRefused(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	first := lock(t, s, t0)
	second := lock(t, s, t0.Add(time.Minute)) // first's lock expired
	started := event(1, engine.OrchestrationStarted)
	c := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: first.LockToken, Now: t0,
		NewEvents: []engine.Event{started}, Status: engine.StatusRunning, Consumed: []int64{first.Messages[0].ID}}
	if err := s.CommitTurn(ctx, c); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("commit with the expired lock: %v", err)
	}
	c.LockToken = second.LockToken
	commit(t, s, c)
	// A commit unlocks: the token is no good afterwards either.
	if err := s.CommitTurn(ctx, c); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("second commit with the same token: %v", err)
	}
	if h, _ := s.History(ctx, "i1", 0); !reflect.DeepEqual(h, []engine.Event{started}) {
		t.Fatalf("history %+v", h)
	}
}

func TestContinueAsNew(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	item := lock(t, s, t0)
	carried := engine.Event{Kind: engine.ExternalEventPersistent, Name: "X", Result: json.RawMessage(`"kept"`)}
	first := []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.OrchestrationContinuedAsNew)}
	custom := "round 1"
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: first, Status: engine.StatusContinuedAsNew, Consumed: []int64{item.Messages[0].ID}, CustomStatus: &custom,
		ContinueAsNew: &engine.ContinueAsNew{Input: json.RawMessage(`2`), Started: engine.StartMessage("i1", "Greeting", json.RawMessage(`2`)), Carried: []engine.Event{carried}},
	})
	inst, _ := s.GetInstance(ctx, "i1")
	if inst.ExecutionID != 2 || inst.Status != engine.StatusPending || string(inst.Input) != `2` || inst.CustomStatus != "round 1" {
		t.Fatalf("instance %+v", inst)
	}
	if h, err := s.History(ctx, "i1", 0); h != nil || err != nil {
		t.Fatalf("the new execution has history %+v, %v", h, err)
	}
	if h, _ := s.History(ctx, "i1", 1); !reflect.DeepEqual(h, first) {
		t.Fatalf("the first execution's history %+v", h)
	}
	next := lock(t, s, t0)
	want := []engine.Event{engine.StartMessage("i1", "Greeting", json.RawMessage(`2`)), carried}
	if next.HistoryLen != 0 || !reflect.DeepEqual(messageEvents(next.Messages), want) {
		t.Fatalf("next execution's work %+v", next)
	}
	// The new execution's history starts again at 1.
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 2, LockToken: next.LockToken, Now: t0,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted)}, Status: engine.StatusRunning})
	if h, _ := s.History(ctx, "i1", 2); len(h) != 1 {
		t.Fatalf("the second execution's history %+v", h)
	}
}

func TestChildren(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	create(t, s, "taken")
	if _, err := s.db.Exec(`DELETE FROM messages WHERE instance_id = 'taken'`); err != nil {
		t.Fatal(err)
	}
	item := lock(t, s, t0)
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.SubOrchestrationScheduled),
			event(3, engine.SubOrchestrationScheduled), event(4, engine.SubOrchestrationScheduled),
			event(5, engine.SubOrchestrationScheduled), event(6, engine.OrchestrationChained), event(7, engine.SubOrchestrationScheduled)},
		Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID},
		Children: []store.NewChild{
			{ID: "i1:2", Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"kid"`), ScheduleID: 2},
			{ID: "i1:3", Name: "Nope", ScheduleID: 3},
			{ID: "taken", Name: "Greeting", ModuleHash: "h1", ScheduleID: 4},
			{ID: "i1:5", Name: "Greeting", ModuleHash: "h9", ScheduleID: 5},
			{ID: "i1:6", Name: "Greeting", ModuleHash: "h1", ScheduleID: 6, Detached: true},
			{ID: "i1:7", Name: "Greeting", ModuleHash: "h1", ScheduleID: 7},
		},
	})
	work := map[string]*store.WorkItem{}
	for {
		item, err := lockNext(s, t0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			break
		}
		work[item.Instance.ID] = item
	}
	if ids := slices.Sorted(maps.Keys(work)); !reflect.DeepEqual(ids, []string{"i1", "i1:2", "i1:6", "i1:7"}) {
		t.Fatalf("work for %q", ids)
	}
	// The children that cannot start fail at once, reported to the parent.
	want := []engine.Event{
		{Kind: engine.SubOrchestrationFailed, ScheduleID: 3, Failure: &engine.Failure{Message: `child orchestration "Nope" could not start: no deployed module registers orchestration "Nope"`}},
		{Kind: engine.SubOrchestrationFailed, ScheduleID: 4, Failure: &engine.Failure{Message: `child orchestration "Greeting" could not start: instance id "taken" is already taken`}},
		{Kind: engine.SubOrchestrationFailed, ScheduleID: 5, Failure: &engine.Failure{Message: `child orchestration "Greeting" could not start: module h9 is not deployed`}},
	}
	if got := messageEvents(work["i1"].Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("parent's messages %+v\nwant %+v", got, want)
	}
	if kid := work["i1:2"]; !reflect.DeepEqual(messageEvents(kid.Messages), []engine.Event{{Kind: engine.OrchestrationStarted, Name: "Greeting", InstanceID: "i1:2", Input: json.RawMessage(`"kid"`)}}) ||
		kid.Instance.ModuleHash != "h1" || kid.Instance.Status != engine.StatusPending {
		t.Fatalf("child's work %+v", kid)
	}
	// The attached children report their end to the parent, however it
	// went; the detached one reports nothing.
	ends := map[string]store.TurnCommit{
		"i1:2": {Status: engine.StatusCompleted, Result: json.RawMessage(`"done"`)},
		"i1:6": {Status: engine.StatusCompleted, Result: json.RawMessage(`"ignored"`)},
		"i1:7": {Status: engine.StatusCanceled, Failure: &engine.Failure{Message: "canceled"}},
	}
	for _, id := range []string{"i1:2", "i1:6", "i1:7"} {
		c := ends[id]
		c.InstanceID, c.ExecutionID, c.LockToken, c.Now = id, 1, work[id].LockToken, t0
		c.NewEvents = []engine.Event{event(1, engine.OrchestrationStarted), event(2, engine.OrchestrationCompleted)}
		c.Consumed = []int64{work[id].Messages[0].ID}
		commit(t, s, c)
	}
	if err := s.AbandonInstance(ctx, "i1", work["i1"].LockToken); err != nil {
		t.Fatal(err)
	}
	parent := lock(t, s, t0)
	want = append(want,
		engine.Event{Kind: engine.SubOrchestrationCompleted, ScheduleID: 2, Result: json.RawMessage(`"done"`)},
		engine.Event{Kind: engine.SubOrchestrationFailed, ScheduleID: 7, Failure: &engine.Failure{Message: "canceled"}})
	if got := messageEvents(parent.Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("parent's messages %+v\nwant %+v", got, want)
	}
}
