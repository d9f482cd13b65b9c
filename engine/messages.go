package engine

import (
	"encoding/json"
	"fmt"
	"time"
)

// The messages a caller delivers on the engine's behalf. Some messages are
// made where only the caller's storage knows the facts: whether a child's
// instance id is free, which parent still waits for an instance that ended,
// which messages arrived while the turn that continued as new ran. The
// storage supplies those facts and the engine, here, decides the message,
// so that every store delivers the same bytes and none re-implements a
// rule.

// StartMessage returns the OrchestrationStarted message that begins an
// execution of orchestration name as instance id with input: the first
// message of a new instance, of a child, and of the execution after a
// continue-as-new (ContinueAsNew.Started).
func StartMessage(id, name string, input json.RawMessage) Event {
	return Event{Kind: OrchestrationStarted, Name: name, InstanceID: id, Input: input}
}

// ScheduledStart is StartMessage for a run of a schedule: it carries the
// result or the failure of the schedule's last run that finished, which
// the orchestration reads (the Start job's result and failure; ctx.LastRun
// in the Go SDK). An empty result without a failure is JSON null.
func ScheduledStart(id, name string, input, lastResult json.RawMessage, lastFailure *Failure) Event {
	ev := StartMessage(id, name, input)
	switch {
	case lastFailure != nil:
		ev.Failure = lastFailure
	case len(lastResult) == 0:
		ev.Result = json.RawMessage("null")
	default:
		ev.Result = lastResult
	}
	return ev
}

// Start returns the message that begins the child.
func (c ChildTask) Start() Event { return StartMessage(c.InstanceID, c.Name, c.Input) }

// ChildNotStarted returns the message the parent of a child that could not
// start gets: a SubOrchestrationFailed naming schedule, the parent's event
// that started it, saying that orchestration name could not start and why
// (a fact, such as "instance id "x" is already taken").
func ChildNotStarted(schedule int64, name, why string) Event {
	return Event{Kind: SubOrchestrationFailed, ScheduleID: schedule,
		Failure: &Failure{Message: fmt.Sprintf("child orchestration %q could not start: %s", name, why)}}
}

// Report returns the message the parent of an instance that ended with
// status (terminal), result and failure gets, naming schedule, the parent's
// event that started it: a SubOrchestrationCompleted with the result, or for
// any other end a SubOrchestrationFailed with the failure.
func Report(schedule int64, status Status, result json.RawMessage, failure *Failure) Event {
	if status == StatusCompleted {
		return Event{Kind: SubOrchestrationCompleted, ScheduleID: schedule, Result: result}
	}
	return Event{Kind: SubOrchestrationFailed, ScheduleID: schedule, Failure: failure}
}

// ChildGone returns the message the parent gets, in place of a report, for
// a child it waits for that no longer exists (purged, or started by
// another instance): a SubOrchestrationFailed naming schedule, the event
// that started child id.
func ChildGone(schedule int64, id string) Event {
	return Event{Kind: SubOrchestrationFailed, ScheduleID: schedule,
		Failure: &Failure{Message: fmt.Sprintf("child instance %q is gone (purged, or started by another instance)", id)}}
}

// Message returns the message the instance the event is raised at gets:
// an ExternalEvent, or an ExternalEventPersistent, with the name and data.
func (r RaiseTask) Message() Event {
	ev := Event{Kind: ExternalEvent, Name: r.Name, Result: r.Data}
	if r.Persistent {
		ev.Kind = ExternalEventPersistent
	}
	return ev
}

// UpdateRequest returns the message that asks instance's orchestration to
// run the handler of the update name with input, as the update id: an
// UpdateAccepted, recorded once the orchestration accepts it.
func UpdateRequest(id, name string, input json.RawMessage) Event {
	return Event{Kind: UpdateAccepted, UpdateID: id, Name: name, Input: input}
}

// Delivered returns the message the sender gets once the event is among
// the target's messages.
func (r RaiseTask) Delivered() Event {
	return Event{Kind: ExternalEventDelivered, ScheduleID: r.ScheduleID}
}

// NotDelivered returns the message the sender gets when the event could not
// be delivered, for why (a fact the caller's storage knows, such as "it
// does not exist").
func (r RaiseTask) NotDelivered(why string) Event {
	return Event{Kind: ExternalEventNotDelivered, ScheduleID: r.ScheduleID,
		Failure: &Failure{Message: fmt.Sprintf("event %q was not delivered to instance %q: %s", r.Name, r.InstanceID, why)}}
}

// Fired returns the message that fires the timer once it is due.
func (t TimerTask) Fired() Event {
	at := t.FireAt
	return Event{Kind: TimerFired, ScheduleID: t.ScheduleID, FireAt: &at}
}

// OutlivesExecution reports whether a message an execution that ended by
// continuing as new, or by a reset, left unconsumed (one that arrived while
// its last turn ran, or a timer not yet due) goes on to the next
// execution, after the messages that begin it (ContinueAsNew's Started and
// Carried, a reset's marker and what it delivers again). Completions do not: they name the ended execution's
// events, whose ids the next execution uses again for others. Raised
// events and requests to cancel or terminate the instance do.
func OutlivesExecution(m Event) bool {
	switch m.Kind {
	case ActivityCompleted, ActivityFailed, TimerFired, SubOrchestrationCompleted, SubOrchestrationFailed,
		ExternalEventDelivered, ExternalEventNotDelivered:
		return false
	}
	return true
}

// GiveUp returns the turn that fails an instance whose turn cannot run
// (its history is corrupt, or its turns keep being delivered and never
// committed), without a guest: OrchestrationFailed with failure, recorded
// after the historyLen events of its execution's history at now. Every
// message of the turn is consumed unapplied; the instance's parent, if one
// waits, is told as for any failure.
func GiveUp(historyLen int64, now time.Time, failure *Failure) *TurnResult {
	return &TurnResult{
		NewEvents: []Event{{ID: historyLen + 1, Kind: OrchestrationFailed, Time: now, Failure: failure}},
		Status:    StatusFailed, Failure: failure,
	}
}
