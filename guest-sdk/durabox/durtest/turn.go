package durtest

import (
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// turn runs one turn of the instance on its visible messages, and does
// with the result what a host's store does with a committed turn: history
// extended, activities queued, timers set, children started or cancelled,
// the parent told of the end, the next execution begun.
func (i *Instance) turn() {
	e := i.env
	e.t.Helper()
	var messages []engine.Event
	var kept []message
	for _, m := range i.inbox {
		if m.visible.After(e.now) {
			kept = append(kept, m)
		} else {
			messages = append(messages, m.ev)
		}
	}
	i.inbox = kept
	n := len(i.executions) - 1
	if i.crashed[n] {
		// The engine failed the execution and will not take another turn;
		// a host's would drop these messages for the same reason.
		for _, m := range messages {
			i.dropped = append(i.dropped, engine.Dropped{Message: m, Reason: fmt.Sprintf("the instance is already %s", i.status)})
		}
		return
	}
	in := engine.TurnInput{History: i.executions[n], Messages: messages, Now: e.now, Execution: int64(n + 1), HistoryWarning: int64(e.opts.HistoryWarning)}
	res, err := i.guest.turn(i.exec, in)
	for err == nil && res.Rejected != nil {
		// As a host does: the refusal is the update's answer, and the turn
		// runs again without it, on a fresh runtime that replays history.
		r := res.Rejected
		i.refused[r.UpdateID] = r.Failure
		messages = slices.Delete(messages, r.Message, r.Message+1)
		i.exec, i.guest = engine.NewExecution(), e.newGuest()
		in.Messages = messages
		res, err = i.guest.turn(i.exec, in)
	}
	if err != nil {
		e.t.Fatalf("durtest: the engine refused a turn of instance %s (a bug in durtest): %v", i.id, err)
	}
	i.executions[n] = append(i.executions[n], res.NewEvents...)
	i.dropped = append(i.dropped, res.Dropped...)
	if res.Err != nil {
		if i.crashed == nil {
			i.crashed = map[int]bool{}
		}
		i.crashed[n] = true
	}
	for _, a := range res.Activities {
		e.queue(&task{inst: i, execution: n + 1, ActivityTask: a}, e.now)
	}
	for _, t := range res.Timers {
		i.enqueue(t.Fired(), t.FireAt)
	}
	for _, c := range res.Children {
		i.startChild(c)
	}
	for _, r := range res.Raises {
		i.deliver(r)
	}
	for _, id := range res.CancelChildren {
		if c := e.byID[id]; c != nil {
			c.enqueue(engine.Event{Kind: engine.OrchestrationCancelRequested, Reason: fmt.Sprintf("its parent %s cancelled it", i.id)}, e.now)
		}
	}
	if res.CustomStatus != nil {
		i.custom = *res.CustomStatus
	}
	for _, ev := range res.NewEvents {
		if ev.Kind == engine.AttributesSet {
			i.attributes = append(i.attributes, ev)
		}
	}
	i.status, i.result, i.failure = res.Status, res.Result, res.Failure
	switch {
	case res.ContinueAsNew != nil:
		i.attributes = nil
		i.continueAsNew(res.ContinueAsNew)
	case res.Status.IsTerminal():
		i.report()
	}
}

// startChild starts a child the turn scheduled or, when it cannot start,
// tells the parent at once (unless nobody waits for it).
func (i *Instance) startChild(c engine.ChildTask) {
	e := i.env
	var reason string
	switch {
	case !registered(c.Name):
		reason = fmt.Sprintf("no deployed module registers orchestration %q", c.Name)
	case e.byID[c.InstanceID] != nil:
		reason = fmt.Sprintf("instance id %q is already taken", c.InstanceID)
	default:
		child := e.create(c.InstanceID, c.Name, c.Input)
		if !c.Detached {
			child.parent, child.parentExecution, child.parentSchedule = i, len(i.executions), c.ScheduleID
		}
		return
	}
	if !c.Detached {
		i.enqueue(engine.ChildNotStarted(c.ScheduleID, c.Name, reason), e.now)
	}
}

// deliver delivers an event the turn raised to its instance, and tells
// the instance that raised it the outcome, as a host's store does.
func (i *Instance) deliver(r engine.RaiseTask) {
	e := i.env
	outcome := r.Delivered()
	switch target := e.byID[r.InstanceID]; {
	case target == nil:
		outcome = r.NotDelivered("no such instance exists")
	case target.status.IsTerminal():
		outcome = r.NotDelivered(fmt.Sprintf("instance finished: it is %s", target.status))
	case r.Persistent && full(target):
		taken, waiting := target.persistentEvents()
		// A host's store words it so.
		outcome = r.NotDelivered(fmt.Sprintf("too many persistent events: its execution has taken %d and has %d waiting, at most %d between them",
			taken, waiting, engine.MaxPersistentEvents))
	default:
		target.enqueue(r.Message(), e.now)
	}
	i.enqueue(outcome, e.now)
}

// persistentEvents counts the persistent events the instance's execution
// has taken (in its history) and has waiting (in its inbox).
func (i *Instance) persistentEvents() (taken, waiting int) {
	for _, ev := range i.executions[len(i.executions)-1] {
		if ev.Kind == engine.ExternalEventPersistent {
			taken++
		}
	}
	for _, m := range i.inbox {
		if m.ev.Kind == engine.ExternalEventPersistent {
			waiting++
		}
	}
	return taken, waiting
}

// full reports whether the instance's execution takes no more persistent
// events.
func full(i *Instance) bool {
	taken, waiting := i.persistentEvents()
	return taken+waiting >= engine.MaxPersistentEvents
}

// report tells the parent that waits for the instance how it ended,
// unless the parent's execution that started it has continued as new.
func (i *Instance) report() {
	p := i.parent
	if p == nil || i.parentExecution != len(p.executions) {
		return
	}
	p.enqueue(engine.Report(i.parentSchedule, i.status, i.result, i.failure), i.env.now)
}

// continueAsNew begins the instance's next execution on a fresh runtime.
// Its messages are the engine's Started and Carried, and the messages the
// ended execution left that engine.OutlivesExecution keeps (the results of
// its activities still to come go to nobody).
func (i *Instance) continueAsNew(c *engine.ContinueAsNew) {
	e := i.env
	left := i.inbox
	i.inbox = nil
	i.executions = append(i.executions, nil)
	i.exec, i.guest = engine.NewExecution(), e.newGuest()
	i.status, i.result, i.failure = engine.StatusPending, nil, nil
	for _, ev := range append([]engine.Event{c.Started}, c.Carried...) {
		i.enqueue(ev, e.now)
	}
	for _, m := range left {
		if engine.OutlivesExecution(m.ev) {
			i.enqueue(m.ev, m.visible)
		}
	}
}

// queue queues an attempt of an activity call that begins at start and
// takes as long as Env.ActivityTakes says, or until its deadline.
func (e *Env) queue(k *task, start time.Time) {
	e.seq++
	k.seq, k.due, k.timedOut = e.seq, start.Add(e.durations[k.Name]), false
	if k.Timeout > 0 && e.durations[k.Name] > k.Timeout {
		k.due, k.timedOut = start.Add(k.Timeout), true
	}
	e.tasks = append(e.tasks, k)
}

// run runs an attempt of an activity call, the mock if there is one, and
// hands its result to the execution that scheduled it; or, when it failed
// and the call's retry policy allows another, queues the next attempt
// after the policy's wait, as a host does, recording nothing. A call that
// takes longer (Env.ActivityTakes) than its durabox.WithTimeout fails at
// its deadline without running, as a host stops the attempt.
func (e *Env) run(k *task) {
	req := &abi.ActivityRequest{Name: k.Name, Input: k.Input, InstanceID: k.inst.id, Attempt: uint32(k.failures + 1)}
	res := &abi.ActivityResult{Failure: &abi.Failure{Message: fmt.Sprintf("activity %q timed out: it ran past its %s deadline for one attempt, which its call set with durabox.WithTimeout", k.Name, k.Timeout)}}
	if !k.timedOut {
		res = seam.RunActivity(req, e.mocks[k.Name])
	}
	// A result for an execution that has continued as new goes to nobody.
	current := k.execution == len(k.inst.executions)
	ev := engine.Event{Kind: engine.ActivityCompleted, ScheduleID: k.ScheduleID, Result: res.Output}
	if res.Failure != nil {
		ev = engine.Event{Kind: engine.ActivityFailed, ScheduleID: k.ScheduleID, Failure: &engine.Failure{Message: res.Failure.Message, Details: res.Failure.Details, Type: res.Failure.Type}}
		if wait, retry := k.Retry.Next(k.failures+1, ev.Failure); retry && current {
			k.failures++
			e.queue(k, e.now.Add(wait))
			return
		}
	}
	if k.Retry != nil {
		ev.Attempts = int64(k.failures + 1)
	}
	if current {
		k.inst.enqueue(ev, e.now)
	}
}
