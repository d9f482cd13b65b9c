package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Backlog is one instance's backlog of items, run on a store as a host
// runs it, from the instance's first turn to its last result taken: the
// shapes issue 35 found to cost the square of their size. Each store
// counts what a backlog costs it (SQLite in its virtual machine's steps,
// PostgreSQL in rows read) at two sizes and bounds the cost of an item of
// the larger by that of the smaller (BacklogGrowth).
type Backlog struct {
	Name string
	// Run runs a backlog of n items on s, a store with nothing in it.
	Run func(t *testing.T, s store.Store, n int)
}

// BacklogGrowth is how much more one item of a backlog may cost in a
// backlog ten times larger: issue 35's bound. A cost that grows with the
// backlog, such as a query that reads all of it for each item, costs ten
// times more per item.
const BacklogGrowth = 1.5

// Backlogs are one instance's fan-out of activities (queued in one turn,
// leased 64 at a time and completed, the instance taking the results as
// they come), its children (started in one turn, each run to its end, the
// parent taking their results) and events raised at it (64 at a time, the
// instance taking them as they come).
var Backlogs = []Backlog{
	{"activities", fanOut},
	{"children", children},
	{"raised events", raisedEvents},
}

// backlogModule is the module the backlogs run on.
const backlogModule = "backlog"

// Begin deploys the module the backlogs run on, creates instance id and
// commits its first turn, which appends OrchestrationStarted and the
// events first adds from event id 2 on, with the tasks and children first
// adds to the commit.
func Begin(t *testing.T, s store.Store, id string, first func(c *store.TurnCommit)) {
	t.Helper()
	ctx := context.Background()
	if err := s.PutModule(ctx, store.Module{Hash: backlogModule, Wasm: []byte("w"), Orchestrations: []string{orchestration}, Activities: []string{"A"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateInstance(ctx, store.NewInstance{ID: id, Name: orchestration, ModuleHash: backlogModule, Input: json.RawMessage(`1`), Now: t0}); err != nil {
		t.Fatal(err)
	}
	items, err := s.LockNextInstances(ctx, t0, time.Minute, 1, nil)
	if err != nil || len(items) != 1 || items[0].Instance.ID != id {
		t.Fatalf("LockNextInstances = %+v, %v; want %q", items, err, id)
	}
	c := store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: items[0].LockToken, Now: t0, Status: engine.StatusRunning,
		NewEvents: []engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Name: orchestration, InstanceID: id, Input: json.RawMessage(`1`), Time: t0}}}
	for _, m := range items[0].Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	first(&c)
	backlogCommit(t, s, c)
}

func backlogCommit(t *testing.T, s store.Store, c store.TurnCommit) {
	t.Helper()
	if err := s.CommitTurn(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// take runs the turns of the instances with work, 64 locked at a time, as
// a host does: the instance id takes its messages (takeTurn); any other
// (a child) ends in its first turn. It returns how many messages id took.
func take(t *testing.T, s store.Store, id string, next *int64) int {
	t.Helper()
	taken := 0
	for {
		items, err := s.LockNextInstances(context.Background(), t0, time.Minute, 64, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			return taken
		}
		for _, item := range items {
			if item.Instance.ID == id {
				taken += takeTurn(t, s, item, next)
			} else {
				endChild(t, s, item)
			}
		}
	}
}

// takeTurn commits a turn of the locked item that appends the events of the
// messages it took (taking them is what issue 35 found to read an
// instance's whole backlog), from event id *next on, and consumes them.
// It returns how many it appended.
func takeTurn(t *testing.T, s store.Store, item *store.WorkItem, next *int64) int {
	t.Helper()
	c := store.TurnCommit{InstanceID: item.Instance.ID, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning}
	for _, m := range item.Messages {
		ev := m.Event
		ev.ID, ev.Time = *next, t0
		*next++
		c.NewEvents = append(c.NewEvents, ev)
		c.Consumed = append(c.Consumed, m.ID)
	}
	backlogCommit(t, s, c)
	return len(item.Messages)
}

// endChild commits the one turn of a locked child, which completes it.
func endChild(t *testing.T, s store.Store, item *store.WorkItem) {
	t.Helper()
	c := store.TurnCommit{InstanceID: item.Instance.ID, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusCompleted, Result: json.RawMessage(`1`),
		NewEvents: []engine.Event{
			{ID: 1, Kind: engine.OrchestrationStarted, Name: orchestration, InstanceID: item.Instance.ID, Input: json.RawMessage(`1`), Time: t0},
			{ID: 2, Kind: engine.OrchestrationCompleted, Result: json.RawMessage(`1`), Time: t0}}}
	for _, m := range item.Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	backlogCommit(t, s, c)
}

// fanOut schedules n activities in one turn, then leases them in batches
// of 64 and completes them, the instance taking the results as they come.
func fanOut(t *testing.T, s store.Store, n int) {
	ctx := context.Background()
	next := int64(2)
	Begin(t, s, "fan", func(c *store.TurnCommit) {
		for range n {
			in := json.RawMessage(fmt.Sprint(next))
			c.NewEvents = append(c.NewEvents, engine.Event{ID: next, Kind: engine.ActivityScheduled, Name: "A", Input: in, Time: t0})
			c.Activities = append(c.Activities, engine.ActivityTask{ScheduleID: next, Name: "A", Input: in})
			next++
		}
	})
	results := 0
	for {
		ws, err := s.LockNextActivities(ctx, t0, time.Minute, 64, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) == 0 {
			break
		}
		for _, w := range ws {
			if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: w.Task.ScheduleID, Result: w.Task.Input}, t0); err != nil {
				t.Fatal(err)
			}
		}
		results += take(t, s, "fan", &next)
	}
	if results != n {
		t.Fatalf("the instance took %d results of %d activities", results, n)
	}
}

// children starts n children in one turn, then runs them (each one turn
// that completes it) while the parent takes their results.
func children(t *testing.T, s store.Store, n int) {
	next := int64(2)
	Begin(t, s, "parent", func(c *store.TurnCommit) {
		for i := range n {
			id := fmt.Sprint("child-", i)
			c.NewEvents = append(c.NewEvents, engine.Event{ID: next, Kind: engine.SubOrchestrationScheduled, Name: orchestration, InstanceID: id, Time: t0})
			c.Children = append(c.Children, store.NewChild{ID: id, Name: orchestration, ModuleHash: backlogModule, Input: json.RawMessage(`1`), ScheduleID: next})
			next++
		}
	})
	if results := take(t, s, "parent", &next); results != n {
		t.Fatalf("the parent took %d results of %d children", results, n)
	}
}

// raisedEvents raises n events at an instance, 64 at a time, the instance taking
// them as they come.
func raisedEvents(t *testing.T, s store.Store, n int) {
	next := int64(2)
	Begin(t, s, "target", func(*store.TurnCommit) {})
	took := 0
	for i := 0; i < n; i += 64 {
		for j := i; j < min(i+64, n); j++ {
			if err := s.Enqueue(context.Background(), "target", engine.Event{Kind: engine.ExternalEvent, Name: "E", Input: json.RawMessage(fmt.Sprint(j))}, t0, nil); err != nil {
				t.Fatal(err)
			}
		}
		took += take(t, s, "target", &next)
	}
	if took != n {
		t.Fatalf("the instance took %d of %d raised events", took, n)
	}
}
