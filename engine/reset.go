package engine

import "fmt"

// Work is the work an execution has in flight at the end of its history:
// what a host must have queued for it to go on.
type Work struct {
	Activities []ActivityTask
	Timers     []TimerTask
	// Children are the children the execution waits to hear from.
	Children []ChildTask
}

// ResetPlan is what resetting an execution to one of its events keeps,
// discards and must do again.
type ResetPlan struct {
	// Kept are the events up to and including the reset point, Discarded
	// the events after it.
	Kept, Discarded []Event
	// InFlight is the work in flight at the reset point. The host queues it
	// again for the new execution: its activities run again (also those
	// that had completed after the reset point), its timers fire when
	// due, its children report to it.
	InFlight Work
	// Raise are the events raised from outside that the discarded part
	// took in, in order, as messages again (without ids, times or the waits
	// they were bound to): the host delivers them to the new execution
	// after the reset marker, and the rules of each apply afresh. (A
	// cancellation request is not among them: a reset is how an operator
	// brings back an instance, cancelled or not.)
	Raise []Event
}

// PlanReset plans the reset of an execution, whose history is history, to
// its event n: a new execution keeps the events up to n and goes on from
// there, as its first turn records the reset marker (an ExecutionReset
// message) and the commands the last kept step emits on the code it runs
// on now. It refuses (ErrResetPoint) an n outside history, one that would
// keep the execution's end, and one in the middle of a step (between two
// commands of one activation), naming the events to reset to instead; and
// kept events no engine writes (ErrCorruptHistory, as Turn refuses them:
// a reset to before the damage is how an operator brings such an instance
// back).
func PlanReset(history []Event, n int64) (*ResetPlan, error) {
	if n < 1 || n > int64(len(history)) {
		return nil, fmt.Errorf("%w: event %d is not in the history, which has events 1 to %d", ErrResetPoint, n, len(history))
	}
	if err := checkHistory(history[:n], 0, 0, false); err != nil {
		return nil, err
	}
	start := 0
	for start < len(history) && history[start].Kind != OrchestrationStarted {
		start++
	}
	if start == len(history) {
		return nil, fmt.Errorf("%w: the history has no OrchestrationStarted event to keep", ErrResetPoint)
	}
	if n <= int64(start) {
		return nil, fmt.Errorf("%w: the execution starts at event %d; keep at least that", ErrResetPoint, start+1)
	}
	last := &history[n-1]
	if last.IsTerminal() {
		return nil, fmt.Errorf("%w: event %d (%s) ends the execution; reset to an event before it", ErrResetPoint, n, last.Kind)
	}
	if n < int64(len(history)) && history[n].isSchedule() && !last.startsStep() {
		return nil, midStep(history, int(n-1))
	}
	p := &ResetPlan{Kept: history[:n], Discarded: history[n:], InFlight: InFlight(history[:n])}
	for _, ev := range p.Discarded {
		switch ev.Kind {
		case ExternalEvent, ExternalEventPersistent:
			p.Raise = append(p.Raise, Event{Kind: ev.Kind, Name: ev.Name, Result: ev.Result})
		}
	}
	return p, nil
}

// midStep explains why history[i] is no reset point: the commands of one
// step go on after it.
func midStep(history []Event, i int) error {
	first := i
	for first > 0 && !history[first].startsStep() {
		first--
	}
	end := i + 1
	for end+1 < len(history) && history[end+1].isSchedule() {
		end++
	}
	err := fmt.Errorf("%w: event %d (%s) is in the middle of the step that event %d (%s) began; reset to event %d to run that step again on the code the instance goes on with",
		ErrResetPoint, i+1, history[i].Kind, first+1, history[first].Kind, first+1)
	if !history[end].IsTerminal() {
		err = fmt.Errorf("%w, or to event %d, where the step ends", err, end+1)
	}
	return err
}

// InFlight returns the work an execution whose history is history has in
// flight: the operations it schedules and neither completes nor cancels,
// in the order it scheduled them.
func InFlight(history []Event) Work {
	open := map[int64]bool{}
	for _, ev := range history {
		switch ev.Kind {
		case ActivityScheduled, TimerCreated, SubOrchestrationScheduled:
			open[ev.ID] = true
		case ActivityCompleted, ActivityFailed, TimerFired, SubOrchestrationCompleted, SubOrchestrationFailed,
			ActivityCancelRequested, TimerCancelled, SubOrchestrationCancelRequested:
			delete(open, ev.ScheduleID)
		}
	}
	var w Work
	for _, ev := range history {
		if !open[ev.ID] {
			continue
		}
		switch ev.Kind {
		case ActivityScheduled:
			w.Activities = append(w.Activities, activityTask(&ev))
		case TimerCreated:
			w.Timers = append(w.Timers, TimerTask{ScheduleID: ev.ID, FireAt: *ev.FireAt})
		case SubOrchestrationScheduled:
			w.Children = append(w.Children, ChildTask{ScheduleID: ev.ID, InstanceID: ev.InstanceID, Name: ev.Name, Input: ev.Input})
		}
	}
	return w
}
