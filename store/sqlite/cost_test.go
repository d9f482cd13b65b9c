package sqlite

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/storetest"
)

// backlogs are the two sizes each cost is taken at; the larger is ten
// times the smaller.
var backlogs = [2]int{1000, 10000}

// costStore opens a store in a test directory whose steps are counted,
// and returns it with its path.
func costStore(t *testing.T) (*Store, string) {
	t.Helper()
	countSteps.Store(true)
	path := filepath.Join(t.TempDir(), "cost.db")
	return openAt(t, path, Options{Durability: DurabilityNormal}), path
}

// perItem returns the steps run calls for, over n: the cost of one item
// of a backlog of n.
func perItem(path string, n int, run func()) float64 {
	before := stepsOf(path)
	run()
	return float64(stepsOf(path)-before) / float64(n)
}

// within fails the test unless the cost of what at the larger backlog is
// within storetest.BacklogGrowth of its cost at the smaller; per says of
// what the costs are ("per item of a backlog", "for a history").
func within(t *testing.T, what, per string, costs [2]float64) {
	t.Helper()
	t.Logf("%s: %.0f steps %s of %d, %.0f of %d", what, costs[0], per, backlogs[0], costs[1], backlogs[1])
	if costs[0] <= 0 || costs[1] > storetest.BacklogGrowth*costs[0] {
		t.Errorf("%s costs %.0f SQLite steps %s of %d and %.0f of %d: more than %.1f times as much; something reads all of it for each item",
			what, costs[0], per, backlogs[0], costs[1], backlogs[1], storetest.BacklogGrowth)
	}
}

// TestBacklogCostsPerItem: one instance's backlog of activities, of
// children and of raised events (storetest.Backlogs) costs the store the
// same per item at 10,000 as at 1,000, counted in SQLite's steps: queuing
// them, taking them (leasing the tasks, starting the children), finishing
// them, and the instance's turns that take their results.
func TestBacklogCostsPerItem(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backlogs {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			var costs [2]float64
			for i, n := range backlogs {
				s, path := costStore(t)
				costs[i] = perItem(path, n, func() { b.Run(t, s, n) })
			}
			within(t, b.Name, "per item of a backlog", costs)
		})
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
		storetest.Begin(t, s, "long", func(c *store.TurnCommit) {
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
