package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
)

// tally is what the check found.
type tally struct {
	instances, events int
	violations        []string
}

func (t *tally) violate(format string, args ...any) {
	t.violations = append(t.violations, fmt.Sprintf(format, args...))
}

// check reads every instance the host has and checks it against the plan:
// every planned instance and every child is there and ended as expected,
// and every history is well formed.
func check(ctx context.Context, c *client.Client, planned map[string]*expect) (*tally, error) {
	all, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	t := &tally{instances: len(all)}
	seen := map[string]bool{}
	for _, inst := range all {
		seen[inst.ID] = true
		want, ok := planned[inst.ID]
		if !ok {
			if want, err = child(inst.Name, inst.Input); err != nil {
				t.violate("instance %s (%s): %v", inst.ID, inst.Name, err)
				continue
			}
		}
		if err := checkInstance(ctx, c, t, inst, want); err != nil {
			return nil, err
		}
	}
	for id := range planned {
		if !seen[id] {
			t.violate("instance %s was started but the host does not have it", id)
		}
	}
	return t, nil
}

// checkInstance checks one instance's end and every execution's history.
func checkInstance(ctx context.Context, c *client.Client, t *tally, inst client.Instance, want *expect) error {
	result, _ := json.Marshal(want.result)
	if inst.Status != engine.StatusCompleted || !bytes.Equal(inst.Result, result) || inst.ExecutionID != want.executions {
		t.violate("instance %s (%s) is %s in execution %d with %s %v; want Completed in execution %d with %s",
			inst.ID, inst.Name, inst.Status, inst.ExecutionID, inst.Result, inst.Failure, want.executions, result)
	}
	counts := map[engine.EventKind]int{}
	for n := int64(1); n <= inst.ExecutionID; n++ {
		history, err := c.ExecutionHistory(ctx, inst.ID, n)
		if err != nil {
			return err
		}
		t.events += len(history)
		for _, problem := range wellFormed(history) {
			t.violate("instance %s execution %d: %s", inst.ID, n, problem)
		}
		for _, e := range history {
			counts[e.Kind]++
		}
	}
	for _, c := range []struct {
		kind engine.EventKind
		want int
	}{
		{engine.ActivityScheduled, want.activities},
		{engine.TimerCreated, want.timers},
		{engine.SubOrchestrationScheduled, want.children},
		{engine.ExternalEvent, want.events},
	} {
		if counts[c.kind] != c.want {
			t.violate("instance %s (%s) has %d %s events, want %d", inst.ID, inst.Name, counts[c.kind], c.kind, c.want)
		}
	}
	return nil
}

// completes maps each completion to the kind of event it completes.
var completes = map[engine.EventKind]engine.EventKind{
	engine.ActivityCompleted:         engine.ActivityScheduled,
	engine.ActivityFailed:            engine.ActivityScheduled,
	engine.TimerFired:                engine.TimerCreated,
	engine.ExternalEvent:             engine.ExternalSubscribed,
	engine.SubOrchestrationCompleted: engine.SubOrchestrationScheduled,
	engine.SubOrchestrationFailed:    engine.SubOrchestrationScheduled,
}

// wellFormed lists what is wrong with one execution's history: ids that
// are not 1, 2, 3… (a gap or a duplicate), a completion whose schedule is
// missing or of another kind, a schedule completed twice, and an end that
// is not the last event.
func wellFormed(history []engine.Event) []string {
	var problems []string
	kinds := map[int64]engine.EventKind{}
	completed := map[int64]int64{}
	for i, e := range history {
		if e.ID != int64(i+1) {
			problems = append(problems, fmt.Sprintf("event %d of the history has id %d (a gap or a duplicate)", i+1, e.ID))
		}
		kinds[e.ID] = e.Kind
		if e.IsTerminal() && i != len(history)-1 {
			problems = append(problems, fmt.Sprintf("event %d ends the execution but %d events follow it", e.ID, len(history)-1-i))
		}
		schedule, ok := completes[e.Kind]
		if !ok {
			continue
		}
		if got := kinds[e.ScheduleID]; e.ScheduleID >= e.ID || got != schedule {
			problems = append(problems, fmt.Sprintf("event %d (%s) completes event %d, which is %q, not an earlier %s", e.ID, e.Kind, e.ScheduleID, got, schedule))
		}
		if first, twice := completed[e.ScheduleID]; twice {
			problems = append(problems, fmt.Sprintf("event %d completes event %d, which event %d completed already", e.ID, e.ScheduleID, first))
		}
		completed[e.ScheduleID] = e.ID
	}
	if n := len(history); n == 0 || !history[n-1].IsTerminal() {
		problems = append(problems, "the history does not end with the end of the execution")
	}
	return problems
}
