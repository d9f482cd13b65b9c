package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testTimers: a timer's TimerFired becomes visible when it is due, and
// NextVisibleAt says when.
func testTimers(f *fixture) {
	if _, ok, err := f.s.NextVisibleAt(f.ctx, t0); ok || err != nil {
		f.t.Fatalf("NextVisibleAt on an empty store = %v, %v; want nothing", ok, err)
	}
	due := t0.Add(time.Hour)
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), timerCreated(due))
	if at, ok, err := f.s.NextVisibleAt(f.ctx, t0); !ok || err != nil || !at.Equal(due) {
		f.t.Fatalf("NextVisibleAt = %v, %v, %v; want the timer's due time, %v", at, ok, err, due)
	}
	f.noWork(due.Add(-time.Second))
	item := f.lock(due)
	f.messages(item, timerFired(2, due))
	f.commit(turn(item, timerFired(2, due)))
	if at, ok, err := f.s.NextVisibleAt(f.ctx, due); ok || err != nil {
		f.t.Fatalf("NextVisibleAt after the timer fired = %v, %v, %v; want nothing", at, ok, err)
	}
}

// nextInput is the input of the execution after a continue-as-new.
var nextInput = json.RawMessage(`2`)

// continueAsNew commits the turn of item that continues as new with
// nextInput, carrying the persistent event "kept", and returns the events
// it recorded.
func (f *fixture) continueAsNew(item *store.WorkItem) []engine.Event {
	f.t.Helper()
	c := turn(item, raised("Next"), engine.Event{Kind: engine.OrchestrationContinuedAsNew, Input: nextInput})
	c.Status = engine.StatusContinuedAsNew
	c.ContinueAsNew = &engine.ContinueAsNew{Input: nextInput, Started: started(item.Instance.ID, nextInput), Carried: []engine.Event{persistent("kept")}}
	f.commit(c)
	return c.NewEvents
}

// next is how the execution after continueAsNew begins.
func next(id string, more ...engine.Event) []engine.Event {
	return append([]engine.Event{started(id, nextInput), persistent("kept")}, more...)
}

// testContinueAsNew: a continue-as-new starts the next execution with an
// empty history and, as messages, its OrchestrationStarted and the carried
// events; each execution keeps its own history.
func testContinueAsNew(f *fixture) {
	f.create("i1")
	first := f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"))
	f.enqueue("i1", raised("Next"))
	first = append(first, f.continueAsNew(f.lockID(t0, "i1"))...)
	inst := f.instance("i1")
	if inst.ExecutionID != 2 || inst.Status != engine.StatusPending || string(inst.Input) != string(nextInput) || inst.Result != nil {
		f.t.Fatalf("after continue-as-new: execution %d, %s, input %s, result %s; want 2, Pending, %s, none", inst.ExecutionID, inst.Status, inst.Input, inst.Result, nextInput)
	}
	f.history("i1", 0, nil)
	f.history("i1", 1, first)
	item := f.lockID(t0, "i1")
	if item.HistoryLen != 0 || item.Instance.ExecutionID != 2 {
		f.t.Fatalf("next execution's work: HistoryLen %d, execution %d; want 0, 2", item.HistoryLen, item.Instance.ExecutionID)
	}
	f.messages(item, next("i1")...)
	second := turn(item, started("i1", nextInput), persistent("kept"))
	f.commit(second)
	f.history("i1", 0, second.NewEvents)
	f.history("i1", 2, second.NewEvents)
	f.history("i1", 1, first)
}

// testContinueAsNewLeavesTheOldExecutionBehind: what the ended execution
// left (a running activity, a timer, a result that came while the turn
// ran) does not reach the next one; the messages that came while the turn
// ran and that engine.OutlivesExecution keeps follow the carried events,
// in the order they came in.
func testContinueAsNewLeavesTheOldExecutionBehind(f *fixture) {
	due := t0.Add(time.Hour)
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"), scheduled("Refund"), timerCreated(due))
	f.enqueue("i1", raised("Next"))
	item := f.lockID(t0, "i1")
	running, done := f.lease(t0), f.lease(t0)
	f.enqueue("i1", persistent("late"))
	f.must(f.s.CompleteActivity(f.ctx, done, activityCompleted(done.Task.ScheduleID, `"done"`), t0), "CompleteActivity while the turn runs")
	cancel := engine.Event{Kind: engine.OrchestrationCancelRequested, Reason: "late"}
	f.enqueue("i1", raised("Mid"))
	f.enqueue("i1", cancel)
	f.continueAsNew(item)
	// The old execution's task, running as it ended, may finish; its result
	// must go nowhere.
	if err := f.s.CompleteActivity(f.ctx, running, activityCompleted(running.Task.ScheduleID, `"old"`), t0); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		f.t.Fatalf("CompleteActivity of the ended execution's task: %v; want success or ErrLeaseLost", err)
	}
	f.messages(f.lockID(due, "i1"), next("i1", persistent("late"), raised("Mid"), cancel)...)
}

// testChildren: a child started with a turn reports its end to its parent
// as a message naming its event; a detached child does not; a child that
// cannot start fails at once.
func testChildren(f *fixture) {
	f.create("p")
	f.create("taken")
	c := turn(f.lockID(t0, "p"), started("p", input("p")), childScheduled("p:2"),
		engine.Event{Kind: engine.OrchestrationChained, Name: orchestration, InstanceID: "p:3", Input: input("p:3")},
		childScheduled("p:4"), childScheduled("p:5"), childScheduled("p:6"), childScheduled("taken"))
	detached := childOf("p:3", 3, module)
	detached.Detached = true
	c.Children = []store.NewChild{childOf("p:2", 2, module), detached, childOf("p:4", 4, ""), childOf("p:5", 5, "not-deployed"), childOf("p:6", 6, module), childOf("taken", 7, module)}
	f.commit(c)
	for _, id := range []string{"p:2", "p:3", "p:6"} {
		if inst := f.instance(id); inst.Name != orchestration || inst.ModuleHash != module || inst.Status != engine.StatusPending || string(inst.Input) != string(input(id)) {
			f.t.Fatalf("child %s: %+v; want a Pending %s on %s with input %s", id, inst, orchestration, module, input(id))
		}
	}
	for _, id := range []string{"p:4", "p:5"} {
		_, err := f.s.GetInstance(f.ctx, id)
		f.wantErr(err, store.ErrNotFound, "GetInstance of a child that could not start")
	}
	if inst := f.instance("taken"); string(inst.Input) != `"taken"` {
		f.t.Fatalf("the instance whose id a child wanted has input %s; want it untouched, \"taken\"", inst.Input)
	}
	f.run("p:2", t0, started("p:2", input("p:2")), completed(`"two"`))
	f.run("p:3", t0, started("p:3", input("p:3")), completed(`"three"`))
	f.run("p:6", t0, started("p:6", input("p:6")), failed("six broke"))
	// The failures to start name their events, in the engine's words with
	// the facts only the store knows; the ends are the engine's reports.
	f.messages(f.lockID(t0, "p"),
		engine.ChildNotStarted(4, orchestration, `no deployed module registers orchestration "Order"`),
		engine.ChildNotStarted(5, orchestration, "module not-deployed is not deployed"),
		engine.ChildNotStarted(7, orchestration, `instance id "taken" is already taken`),
		engine.Report(2, engine.StatusCompleted, json.RawMessage(`"two"`), nil),
		engine.Report(6, engine.StatusFailed, nil, &engine.Failure{Message: "six broke"}))
}

// testStartsFairAcrossParents: the starts of one parent's many children
// take turns with the other starts, a round at a time: a parent's first
// child waiting, then the next parent's, then an instance started after
// both, and only then each parent's second child; each parent's children
// start in the order it started them. Before, a parent's children were
// served before anything started after them, so an instance started
// beside 10,000 children waited for all of them (issue 35).
func testStartsFairAcrossParents(f *fixture) {
	f.create("p")
	f.create("q")
	for _, p := range []struct {
		parent   string
		children int
	}{{"p", 6}, {"q", 2}} {
		events := []engine.Event{started(p.parent, input(p.parent))}
		var children []store.NewChild
		for i := range p.children {
			id := fmt.Sprintf("%s:%d", p.parent, i+2)
			events = append(events, childScheduled(id))
			children = append(children, childOf(id, int64(i+2), module))
		}
		c := turn(f.lockID(t0, p.parent), events...)
		c.Children = children
		f.commit(c)
	}
	f.create("hello")
	var served []string
	for range 9 {
		served = append(served, f.lock(t0).Instance.ID)
	}
	f.noWork(t0)
	if want := []string{"p:2", "q:2", "hello", "p:3", "q:3", "p:4", "p:5", "p:6", "p:7"}; !slices.Equal(served, want) {
		f.t.Fatalf("the starts were served in the order %q; want each parent's children in turn with the instance started after them, %q", served, want)
	}
}

// withChild makes parent "p" run its first turn, which starts child "p:2"
// (event 2), and returns the commit before it is made.
func (f *fixture) withChild(more ...engine.Event) store.TurnCommit {
	f.t.Helper()
	f.create("p")
	c := turn(f.lockID(t0, "p"), append([]engine.Event{started("p", input("p")), childScheduled("p:2")}, more...)...)
	c.Children = []store.NewChild{childOf("p:2", 2, module)}
	return c
}

// testChildOfAnEndedExecution: a child started by an execution that then
// continued as new does not report to the next execution.
func testChildOfAnEndedExecution(f *fixture) {
	f.commit(f.withChild())
	f.enqueue("p", raised("Next"))
	f.continueAsNew(f.lockID(t0, "p"))
	f.run("p:2", t0, started("p:2", input("p:2")), completed(`"two"`))
	f.messages(f.lockID(t0, "p"), next("p")...)
}
