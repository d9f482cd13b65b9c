package sqlite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// maxGrowth is how much more one item of a backlog may cost, in steps of
// SQLite's virtual machine (steps.go), in a backlog ten times larger:
// issue 35's bound. A cost that grows with the backlog, such as a query
// that reads all of it for each item, costs ten times more per item.
const maxGrowth = 1.5

// backlogs are the two sizes each cost is taken at; the larger is ten
// times the smaller.
var backlogs = [2]int{1000, 10000}

// costStore opens a store in a test directory whose steps are counted,
// and returns it with its path.
func costStore(t *testing.T) (*Store, string) {
	t.Helper()
	countSteps.Store(true)
	path := filepath.Join(t.TempDir(), "cost.db")
	s := openAt(t, path, Options{Durability: DurabilityNormal})
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"O"}, Activities: []string{"A"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// perItem returns the steps run calls for, over n: the cost of one item
// of a backlog of n.
func perItem(path string, n int, run func()) float64 {
	before := stepsOf(path)
	run()
	return float64(stepsOf(path)-before) / float64(n)
}

// within fails the test unless the cost of what at the larger backlog is
// within maxGrowth of its cost at the smaller; per says of what the costs
// are ("per item of a backlog", "for a history").
func within(t *testing.T, what, per string, costs [2]float64) {
	t.Helper()
	t.Logf("%s: %.0f steps %s of %d, %.0f of %d", what, costs[0], per, backlogs[0], costs[1], backlogs[1])
	if costs[0] <= 0 || costs[1] > maxGrowth*costs[0] {
		t.Errorf("%s costs %.0f SQLite steps %s of %d and %.0f of %d: more than %.1f times as much; something reads all of it for each item",
			what, costs[0], per, backlogs[0], costs[1], backlogs[1], maxGrowth)
	}
}

// begin creates instance id and commits its first turn, which appends
// OrchestrationStarted and the events first makes from the next event
// ids, with the tasks and children first adds to the commit.
func begin(t *testing.T, s *Store, id string, first func(c *store.TurnCommit)) {
	t.Helper()
	if err := s.CreateInstance(ctx, store.NewInstance{ID: id, Name: "O", ModuleHash: "h1", Input: json.RawMessage(`1`), Now: t0}); err != nil {
		t.Fatal(err)
	}
	item := lock(t, s, t0)
	c := store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning,
		NewEvents: []engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Name: "O", InstanceID: id, Input: json.RawMessage(`1`), Time: t0}}}
	for _, m := range item.Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	first(&c)
	commit(t, s, c)
}

// take runs the instance's turns while it has work, as a host does (see
// takeTurn). It returns how many events the turns appended.
func take(t *testing.T, s *Store, next *int64) int {
	t.Helper()
	taken := 0
	for {
		item, err := lockNext(s, t0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			return taken
		}
		taken += takeTurn(t, s, item, next)
	}
}

// takeTurn commits a turn of the locked item that appends the events of the
// messages it took (taking them is what issue 35 found to read an
// instance's whole backlog), from event id *next on, and consumes them.
// It returns how many it appended.
func takeTurn(t *testing.T, s *Store, item *store.WorkItem, next *int64) int {
	t.Helper()
	c := store.TurnCommit{InstanceID: item.Instance.ID, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusRunning}
	for _, m := range item.Messages {
		ev := m.Event
		ev.ID, ev.Time = *next, t0
		*next++
		c.NewEvents = append(c.NewEvents, ev)
		c.Consumed = append(c.Consumed, m.ID)
	}
	commit(t, s, c)
	return len(item.Messages)
}

// TestBacklogCostsPerItem: one instance's backlog of activities, of
// children and of raised events costs the store the same per item at
// 10,000 as at 1,000, counted in SQLite's steps: queuing them, taking them
// (leasing the tasks, starting the children), finishing them, and the
// instance's turns that take their results.
func TestBacklogCostsPerItem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// run runs a backlog of n items of one instance on s, from its
		// first turn to its last result taken.
		run func(t *testing.T, s *Store, n int)
	}{
		{"activities", fanOut},
		{"children", children},
		{"raised events", raised},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var costs [2]float64
			for i, n := range backlogs {
				s, path := costStore(t)
				costs[i] = perItem(path, n, func() { tc.run(t, s, n) })
			}
			within(t, tc.name, "per item of a backlog", costs)
		})
	}
}

// fanOut schedules n activities in one turn, then leases them in batches
// of 64 and completes them, the instance taking the results as they come.
func fanOut(t *testing.T, s *Store, n int) {
	next := int64(2)
	begin(t, s, "fan", func(c *store.TurnCommit) {
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
		results += take(t, s, &next)
	}
	if results != n {
		t.Fatalf("the instance took %d results of %d activities", results, n)
	}
}

// children starts n children in one turn, then runs them (each one turn
// that completes it) while the parent takes their results.
func children(t *testing.T, s *Store, n int) {
	next := int64(2)
	begin(t, s, "parent", func(c *store.TurnCommit) {
		for i := range n {
			c.NewEvents = append(c.NewEvents, engine.Event{ID: next, Kind: engine.SubOrchestrationScheduled, Name: "O", InstanceID: fmt.Sprint("child-", i), Time: t0})
			c.Children = append(c.Children, store.NewChild{ID: fmt.Sprint("child-", i), Name: "O", ModuleHash: "h1", Input: json.RawMessage(`1`), ScheduleID: next})
			next++
		}
	})
	results := 0
	for {
		items, err := s.LockNextInstances(ctx, t0, time.Minute, 64, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		for _, item := range items {
			if item.Instance.ID == "parent" {
				results += takeTurn(t, s, item, &next)
				continue
			}
			c := store.TurnCommit{InstanceID: item.Instance.ID, ExecutionID: 1, LockToken: item.LockToken, Now: t0, Status: engine.StatusCompleted, Result: json.RawMessage(`1`),
				NewEvents: []engine.Event{
					{ID: 1, Kind: engine.OrchestrationStarted, Name: "O", InstanceID: item.Instance.ID, Input: json.RawMessage(`1`), Time: t0},
					{ID: 2, Kind: engine.OrchestrationCompleted, Result: json.RawMessage(`1`), Time: t0}}}
			for _, m := range item.Messages {
				c.Consumed = append(c.Consumed, m.ID)
			}
			commit(t, s, c)
		}
	}
	if results != n {
		t.Fatalf("the parent took %d results of %d children", results, n)
	}
}

// raised raises n events at an instance, 64 at a time, the instance taking
// them as they come.
func raised(t *testing.T, s *Store, n int) {
	next := int64(2)
	begin(t, s, "target", func(*store.TurnCommit) {})
	took := 0
	for i := 0; i < n; i += 64 {
		for j := i; j < min(i+64, n); j++ {
			if err := s.Enqueue(ctx, "target", engine.Event{Kind: engine.ExternalEvent, Name: "E", Input: json.RawMessage(fmt.Sprint(j))}, t0); err != nil {
				t.Fatal(err)
			}
		}
		took += take(t, s, &next)
	}
	if took != n {
		t.Fatalf("the instance took %d of %d raised events", took, n)
	}
}

// TestStatusCostsTheSameAtAnyLength: what a status reads (the instance,
// its executions with their lengths, its history's warning) costs the same
// for a history of 10,000 events as for one of 1,000, counted in SQLite's
// steps. Counting the events of each execution read them all, and SQLite
// planned the join of that count with the first and last events as a
// scan of the history for each event: durabox status of an instance of
// 8,000 events took 14 s (issue 35).
func TestStatusCostsTheSameAtAnyLength(t *testing.T) {
	t.Parallel()
	var costs [2]float64
	for i, n := range backlogs {
		s, path := costStore(t)
		begin(t, s, "long", func(c *store.TurnCommit) {
			for id := int64(2); id <= int64(n); id++ {
				c.NewEvents = append(c.NewEvents, engine.Event{ID: id, Kind: engine.ExternalEvent, Name: "E", Input: json.RawMessage(`1`), Time: t0})
			}
		})
		costs[i] = perItem(path, 1, func() {
			if _, err := s.GetInstance(ctx, "long"); err != nil {
				t.Fatal(err)
			}
			xs, err := s.Executions(ctx, "long")
			if err != nil || len(xs) != 1 || xs[0].Events != int64(n) {
				t.Fatalf("Executions = %+v, %v; want one of %d events", xs, err, n)
			}
		})
	}
	within(t, "a status", "for a history", costs)
}
