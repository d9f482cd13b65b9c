package torture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
)

// findings is what check found.
type findings struct {
	instances, events int
	// raised, taken: Approval events the host acknowledged, and those
	// that appear in a history; the rest were dropped by the rules.
	raised, taken int
	// marks is how many Mark activities the histories hold; rerun is how
	// many of them ran more than once.
	marks, rerun int
	// updates counts the updates the histories answered.
	updates    int
	violations []string
}

// listAll lists every instance the host has, a page at a time.
func listAll(ctx context.Context, c *client.Client) ([]api.InstanceSummary, error) {
	var all []api.InstanceSummary
	req := client.ListRequest{Limit: 1000}
	for {
		page, err := c.List(ctx, req)
		all = append(all, page.Instances...)
		if err != nil || page.Next == "" {
			return all, err
		}
		req.Cursor = page.Next
	}
}

func (f *findings) violate(format string, args ...any) {
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
}

// check reads every instance the host has and checks it: every planned
// instance and every child is there and ended as expected, every history
// is well formed, every raised event was taken or dropped by the rules,
// and every Mark activity a history says completed really ran. marks
// lists, per Mark key, the delivery number of each run.
func check(ctx context.Context, c *client.Client, planned []*expect, raised map[string][]raise, answers map[string]map[string]api.Update, marks map[string][]int) (*findings, error) {
	all, err := listAll(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("list the instances: %w", err)
	}
	f := &findings{instances: len(all)}
	want := map[string]*expect{}
	for _, e := range planned {
		want[e.id] = e
		f.raised += len(raised[e.id])
	}
	// started are the children the histories started, by id.
	started := map[string]string{}
	seen := map[string]bool{}
	for _, sum := range all {
		inst, err := c.Instance(ctx, sum.ID)
		if err != nil {
			return nil, fmt.Errorf("read instance %s: %w", sum.ID, err)
		}
		seen[inst.ID] = true
		e := want[inst.ID]
		if e == nil {
			if e, err = childOf(inst.ID, inst.Name, inst.Input); err != nil {
				f.violate("instance %s: %v", inst.ID, err)
				continue
			}
		}
		histories := make([][]engine.Event, inst.ExecutionID)
		for n := range histories {
			if histories[n], err = c.ExecutionHistory(ctx, inst.ID, int64(n+1)); err != nil {
				return nil, fmt.Errorf("read the history of %s, execution %d: %w", inst.ID, n+1, err)
			}
		}
		f.checkInstance(inst, e, histories, raised[inst.ID], marks)
		f.checkUpdates(inst.ID, histories, answers[inst.ID])
		for _, h := range histories {
			for _, ev := range h {
				if ev.Kind == engine.SubOrchestrationScheduled || ev.Kind == engine.OrchestrationChained {
					if by, twice := started[ev.InstanceID]; twice {
						f.violate("child %s was started by both %s and %s", ev.InstanceID, by, inst.ID)
					}
					started[ev.InstanceID] = inst.ID
				}
			}
		}
	}
	for _, e := range planned {
		if !seen[e.id] {
			f.violate("instance %s (%s) was started, and the host does not have it", e.id, e.name)
		}
	}
	for id, parent := range started {
		if !seen[id] {
			f.violate("instance %s started child %s, and the host does not have it", parent, id)
		}
	}
	for _, inst := range all {
		if _, ok := started[inst.ID]; want[inst.ID] == nil && !ok {
			f.violate("instance %s (%s) was started by nobody", inst.ID, inst.Name)
		}
	}
	return f, nil
}

// checkInstance checks one instance's end, its histories, its events and
// its Mark activities.
func (f *findings) checkInstance(inst api.Instance, e *expect, histories [][]engine.Event, raised []raise, marks map[string][]int) {
	counts := map[engine.EventKind]int{}
	var taken []string
	for n, h := range histories {
		f.events += len(h)
		for _, problem := range wellFormed(h) {
			f.violate("instance %s, execution %d: %s", inst.ID, n+1, problem)
		}
		for _, ev := range h {
			counts[ev.Kind]++
			if ev.Kind == engine.ExternalEvent {
				taken = append(taken, approver(ev.Result))
			}
		}
		f.checkMarks(inst.ID, h, marks)
	}
	result := e.result
	if e.approved != "" {
		by := "(whoever raised the one Approval it took)"
		if len(taken) == 1 {
			by = taken[0]
		}
		result = e.approved + " approved by " + by
	}
	if inst.Status != engine.StatusCompleted || !sameJSON(inst.Result, result) || inst.ExecutionID != e.executions {
		want, _ := json.Marshal(result)
		got := string(inst.Result)
		if inst.Failure != nil {
			got = fmt.Sprintf("%q", inst.Failure.Message)
		}
		f.violate("instance %s (%s) is %s in execution %d with %s; want Completed in execution %d with %s",
			inst.ID, inst.Name, inst.Status, inst.ExecutionID, got, e.executions, want)
	}
	for _, k := range countedKinds {
		if counts[k] != e.steps[k] {
			f.violate("instance %s (%s) has %d %s events over its executions; want %d", inst.ID, inst.Name, counts[k], k, e.steps[k])
		}
	}
	f.taken += len(taken)
	f.checkRaised(inst.ID, raised, taken)
}

// checkUpdates checks that every update the driver had answered is in
// the instance's history once, accepted and answered with the answer the
// driver got, and that a refused one is not there at all.
func (f *findings) checkUpdates(id string, histories [][]engine.Event, answers map[string]api.Update) {
	accepted, completed := map[string]int{}, map[string]engine.Event{}
	for _, h := range histories {
		for _, ev := range h {
			switch ev.Kind {
			case engine.UpdateAccepted:
				accepted[ev.UpdateID]++
			case engine.UpdateCompleted:
				if _, twice := completed[ev.UpdateID]; twice {
					f.violate("instance %s answered update %s twice", id, ev.UpdateID)
				}
				completed[ev.UpdateID] = ev
			}
		}
	}
	for uid, u := range answers {
		ev, done := completed[uid]
		switch {
		case u.State == "Refused" && (accepted[uid] > 0 || done):
			f.violate("instance %s refused update %s, and its history has it", id, uid)
		case u.State == "Refused":
		case accepted[uid] != 1 || !done:
			f.violate("instance %s: update %s, answered %s, is accepted %d times in its history and answered %v", id, uid, u.State, accepted[uid], done)
		case !bytes.Equal(ev.Result, u.Result):
			f.violate("instance %s: update %s answered the driver %s, and its history says %s", id, uid, u.Result, ev.Result)
		default:
			f.updates++
		}
	}
	for uid := range accepted {
		if _, sent := answers[uid]; !sent {
			f.violate("instance %s accepted update %s, which the driver has no answer for", id, uid)
		}
	}
}

// checkRaised checks that the Approval events the instance took follow
// the rules for positional events: an event is taken by the oldest active
// wait of its name when it arrives, and dropped if there is none. Events
// of one instance arrive in the order they were raised (the driver raises
// them one after the other), so the event taken must be one raised, and no
// later than the first one raised after the driver saw the instance wait:
// that one found the wait active unless an earlier event had taken it.
func (f *findings) checkRaised(id string, raised []raise, taken []string) {
	first := slices.IndexFunc(raised, func(r raise) bool { return r.afterWait })
	for _, by := range taken {
		i := slices.IndexFunc(raised, func(r raise) bool { return r.by == by })
		switch {
		case i < 0:
			f.violate("instance %s took an Approval by %q, which nobody raised", id, by)
		case first >= 0 && i > first:
			f.violate("instance %s took the Approval by %q, raised after the one by %q, which was dropped although it was raised while the instance waited",
				id, by, raised[first].by)
		}
	}
}

// checkMarks checks that every Mark activity a history says completed
// ran, as the host's log saw, and that each run of one had a higher
// delivery number than the run before (ActivityInfo.Attempt promises that
// a first delivery means no earlier run); it counts those that ran more
// than once.
func (f *findings) checkMarks(id string, history []engine.Event, marks map[string][]int) {
	completed := map[int64]bool{}
	for _, ev := range history {
		if ev.Kind == engine.ActivityCompleted {
			completed[ev.ScheduleID] = true
		}
	}
	for _, ev := range history {
		if ev.Kind != engine.ActivityScheduled || ev.Name != "Mark" {
			continue
		}
		var in struct{ Key string }
		if err := json.Unmarshal(ev.Input, &in); err != nil {
			f.violate("instance %s, event %d: the input of Mark does not decode: %v", id, ev.ID, err)
			continue
		}
		f.marks++
		runs := marks[in.Key]
		switch {
		case len(runs) == 0 && completed[ev.ID]:
			f.violate("instance %s, event %d: activity Mark %q completed, and it never ran", id, ev.ID, in.Key)
		case len(runs) > 1:
			f.rerun++
			if !increasing(runs) {
				f.violate("instance %s, event %d: activity Mark %q ran %d times, with delivery numbers %v; each run should have a higher one than the run before", id, ev.ID, in.Key, len(runs), runs)
			}
		}
	}
}

// increasing reports whether each of ns is greater than the one before.
func increasing(ns []int) bool {
	for i := 1; i < len(ns); i++ {
		if ns[i] <= ns[i-1] {
			return false
		}
	}
	return true
}

// approver returns who approved, from an Approval event's data.
func approver(data json.RawMessage) string {
	var d struct{ By string }
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Sprintf("(data that does not decode: %s)", data)
	}
	return d.By
}

// sameJSON reports whether got is the JSON form of want.
func sameJSON(got json.RawMessage, want any) bool {
	b, err := json.Marshal(want)
	if err != nil {
		return false
	}
	var g, w any
	return json.Unmarshal(got, &g) == nil && json.Unmarshal(b, &w) == nil && reflect.DeepEqual(g, w)
}

// closes maps each event that completes or cancels a schedule to the kind
// of schedule event it closes.
var closes = map[engine.EventKind]engine.EventKind{
	engine.ActivityCompleted:               engine.ActivityScheduled,
	engine.ActivityFailed:                  engine.ActivityScheduled,
	engine.ActivityCancelRequested:         engine.ActivityScheduled,
	engine.TimerFired:                      engine.TimerCreated,
	engine.TimerCancelled:                  engine.TimerCreated,
	engine.ExternalEvent:                   engine.ExternalSubscribed,
	engine.ExternalSubscribedCancelled:     engine.ExternalSubscribed,
	engine.SubOrchestrationCompleted:       engine.SubOrchestrationScheduled,
	engine.SubOrchestrationFailed:          engine.SubOrchestrationScheduled,
	engine.SubOrchestrationCancelRequested: engine.SubOrchestrationScheduled,
	engine.ExternalEventDelivered:          engine.ExternalEventSent,
	engine.ExternalEventNotDelivered:       engine.ExternalEventSent,
}

// wellFormed lists what is wrong with one execution's history: ids that
// are not 1, 2, 3… (a gap or a duplicate); a start that is not the first
// event or an end that is not the last; a completion or cancellation
// whose schedule is missing, later or of another kind; a schedule
// completed or cancelled twice; a schedule left open when the execution
// completed or continued as new; a child instance scheduled twice.
func wellFormed(history []engine.Event) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	kinds := map[int64]engine.EventKind{}
	closedBy := map[int64]int64{}
	children := map[string]int64{}
	for i, e := range history {
		if e.ID != int64(i+1) {
			add("event %d of the history has id %d (a gap or a duplicate)", i+1, e.ID)
		}
		if (e.Kind == engine.OrchestrationStarted) != (i == 0) {
			add("event %d is %s; a history starts with OrchestrationStarted, once", e.ID, e.Kind)
		}
		if e.IsTerminal() && i != len(history)-1 {
			add("event %d (%s) ends the execution, and %d events follow it", e.ID, e.Kind, len(history)-1-i)
		}
		if _, dup := kinds[e.ID]; !dup {
			kinds[e.ID] = e.Kind
		}
		if e.Kind == engine.SubOrchestrationScheduled || e.Kind == engine.OrchestrationChained {
			if first, twice := children[e.InstanceID]; twice {
				add("event %d starts child %s, which event %d started already", e.ID, e.InstanceID, first)
			}
			children[e.InstanceID] = e.ID
		}
		schedule, ok := closes[e.Kind]
		if !ok {
			continue
		}
		if got := kinds[e.ScheduleID]; e.ScheduleID >= e.ID || got != schedule {
			add("event %d (%s) closes event %d, which is %q, not an earlier %s", e.ID, e.Kind, e.ScheduleID, got, schedule)
		}
		if first, twice := closedBy[e.ScheduleID]; twice {
			add("event %d (%s) closes event %d, which event %d closed already", e.ID, e.Kind, e.ScheduleID, first)
		}
		closedBy[e.ScheduleID] = e.ID
	}
	n := len(history)
	if n == 0 || !history[n-1].IsTerminal() {
		add("the history does not end with the end of the execution")
		return problems
	}
	if k := history[n-1].Kind; k == engine.OrchestrationFailed || k == engine.OrchestrationCanceled {
		return problems // a failure may cut work short; why it failed is reported elsewhere
	}
	var open []string
	for id := int64(1); id <= int64(n); id++ {
		switch kinds[id] {
		case engine.ActivityScheduled, engine.TimerCreated, engine.ExternalSubscribed, engine.SubOrchestrationScheduled, engine.ExternalEventSent:
			if _, ok := closedBy[id]; !ok {
				open = append(open, fmt.Sprintf("%d (%s)", id, kinds[id]))
			}
		}
	}
	if len(open) > 0 {
		add("the execution ended with events %s neither completed nor cancelled", strings.Join(open, ", "))
	}
	return problems
}
