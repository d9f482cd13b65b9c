package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// EventKind names a kind of history event.
type EventKind string

// The kinds of history event.
const (
	// OrchestrationStarted is the first event of every execution.
	OrchestrationStarted EventKind = "OrchestrationStarted"
	// ActivityScheduled records a ScheduleActivity command.
	ActivityScheduled EventKind = "ActivityScheduled"
	// ActivityCompleted records an activity's result; ScheduleID names its
	// ActivityScheduled event.
	ActivityCompleted EventKind = "ActivityCompleted"
	// ActivityFailed records an activity's final failure.
	ActivityFailed EventKind = "ActivityFailed"
	// TimerCreated records a StartTimer command; FireAt is when it is due.
	TimerCreated EventKind = "TimerCreated"
	// TimerFired records that the timer of ScheduleID came due.
	TimerFired EventKind = "TimerFired"
	// TimerCancelled records a CancelTimer command: the timer of ScheduleID
	// will not fire, and if its TimerFired still arrives it is dropped.
	TimerCancelled EventKind = "TimerCancelled"
	// ActivityCancelRequested records a CancelActivity command: the result
	// of the activity of ScheduleID, if it still comes, is dropped.
	ActivityCancelRequested EventKind = "ActivityCancelRequested"
	// ExternalSubscribed records a WaitEvent command: a positional wait for
	// the event called Name.
	ExternalSubscribed EventKind = "ExternalSubscribed"
	// ExternalSubscribedPersistent records a WaitEventPersistent command.
	ExternalSubscribedPersistent EventKind = "ExternalSubscribedPersistent"
	// ExternalSubscribedCancelled records a CancelWait command: the wait of
	// ScheduleID no longer takes events.
	ExternalSubscribedCancelled EventKind = "ExternalSubscribedCancelled"
	// ExternalEvent is a raised event called Name with data Result, bound to
	// the wait of ScheduleID: the oldest wait of that name that was active
	// and unmatched when the event arrived.
	ExternalEvent EventKind = "ExternalEvent"
	// ExternalEventPersistent is a raised persistent event called Name with
	// data Result. It goes to the oldest active persistent wait of that name,
	// now or when one appears.
	ExternalEventPersistent EventKind = "ExternalEventPersistent"
	// SubOrchestrationScheduled records a StartChild command: the child
	// instance InstanceID of orchestration Name, with Input.
	SubOrchestrationScheduled EventKind = "SubOrchestrationScheduled"
	// SubOrchestrationCompleted records the child's Result; ScheduleID names
	// its SubOrchestrationScheduled event.
	SubOrchestrationCompleted EventKind = "SubOrchestrationCompleted"
	// SubOrchestrationFailed records the child's Failure.
	SubOrchestrationFailed EventKind = "SubOrchestrationFailed"
	// SubOrchestrationCancelRequested records a CancelChild command: the
	// result of the child of ScheduleID, if it still comes, is dropped.
	SubOrchestrationCancelRequested EventKind = "SubOrchestrationCancelRequested"
	// OrchestrationChained records a detached StartChild command: the
	// instance InstanceID of Name starts, and nobody waits for it.
	OrchestrationChained EventKind = "OrchestrationChained"
	// CustomStatusSet records a SetCustomStatus command: the instance's
	// custom status is now CustomStatus.
	CustomStatusSet EventKind = "CustomStatusSet"
	// AttributesSet records a SetAttributes command: Input is the search
	// attributes it set or removed (abi.EncodeAttributes).
	AttributesSet EventKind = "AttributesSet"
	// OrchestrationCancelRequested asks the orchestration to stop, for
	// Reason. It sees the request and may clean up before it ends.
	OrchestrationCancelRequested EventKind = "OrchestrationCancelRequested"
	// OrchestrationCompleted ends the execution with Result.
	OrchestrationCompleted EventKind = "OrchestrationCompleted"
	// OrchestrationFailed ends the execution with Failure.
	OrchestrationFailed EventKind = "OrchestrationFailed"
	// OrchestrationCanceled ends the execution with Failure, as
	// OrchestrationFailed does, after its cancellation was requested: the
	// orchestration answered the request by failing (StatusCanceled).
	// Histories recorded before this kind existed end such an execution
	// with OrchestrationFailed after the OrchestrationCancelRequested,
	// which means the same.
	OrchestrationCanceled EventKind = "OrchestrationCanceled"
	// OrchestrationContinuedAsNew ends the execution; the instance goes on
	// in a new execution with Input.
	OrchestrationContinuedAsNew EventKind = "OrchestrationContinuedAsNew"
	// OrchestrationTerminated ends the execution from outside, for Reason,
	// without the orchestration's cooperation: it arrives as a message and
	// the orchestration never sees it (durabox terminate).
	OrchestrationTerminated EventKind = "OrchestrationTerminated"
	// PatchRecorded records a Patch command: the orchestration took the new
	// code path of the change Name (the guest SDK's Patched answered
	// true). Code that no longer asks about the change skips it on replay
	// (see the package doc, "Patches").
	PatchRecorded EventKind = "PatchRecorded"
	// ExternalEventSent records a Raise command: the event Name with data
	// Input for the instance InstanceID, persistent if Persistent. The
	// caller delivers it with the turn's commit and answers with an
	// ExternalEventDelivered or ExternalEventNotDelivered message.
	ExternalEventSent EventKind = "ExternalEventSent"
	// ExternalEventDelivered records that the event of the ExternalEventSent
	// of ScheduleID was delivered: it is among the target instance's
	// messages, which that instance's turns apply under their own rules (a
	// positional event no wait takes is dropped there).
	ExternalEventDelivered EventKind = "ExternalEventDelivered"
	// ExternalEventNotDelivered records that the event of the
	// ExternalEventSent of ScheduleID was not delivered, and why (Failure):
	// no such instance, the instance has finished, or it has as many
	// persistent events as its execution takes.
	ExternalEventNotDelivered EventKind = "ExternalEventNotDelivered"
	// ModuleChanged records that the instance moved, between two steps,
	// from the module FromModule to the module Module, whose code replays
	// the history before it (durabox upgrade). It carries nothing to the
	// orchestration.
	ModuleChanged EventKind = "ModuleChanged"
	// ExecutionReset marks where a reset execution goes on: the events
	// before it were kept from an earlier execution (Reason says which,
	// and up to which event), and from it on the execution runs on Module
	// (moved from FromModule, when that is set), drawing its randomness
	// from the seed of execution SeedExecution, the one that recorded the
	// kept events. The commands the last kept step emits are recorded after
	// it. It carries nothing to the orchestration.
	ExecutionReset EventKind = "ExecutionReset"
	// UpdateAccepted records that the orchestration accepted the update
	// UpdateID, a client's request that the handler it registered for the
	// update Name run with Input: it arrives as a message, and is recorded
	// only once the handler's validator, if any, let it in (a refused
	// update leaves no trace: TurnResult.Rejected). Its handler's commands
	// follow it, as for any step.
	UpdateAccepted EventKind = "UpdateAccepted"
	// UpdateCompleted records a CompleteUpdate command: the handler of the
	// update UpdateID answered, with Result or, when it failed, Failure.
	UpdateCompleted EventKind = "UpdateCompleted"
)

// Event is one entry of an execution's history. Which optional fields are
// set depends on Kind; unset fields are omitted from the JSON form, which is
// the form stores persist and clients read.
type Event struct {
	// ID is the event's position in its execution's history, from 1, without
	// gaps.
	ID int64 `json:"id"`
	// Kind is what happened.
	Kind EventKind `json:"kind"`
	// Time is the logical time of the event: when the turn that recorded it
	// ran. While this event is applied, the guest's clock reads Time.
	Time time.Time `json:"time"`
	// ScheduleID, on a completion event, is the ID of the schedule event it
	// completes.
	ScheduleID int64 `json:"scheduleId,omitempty"`
	// Name is the orchestration name (OrchestrationStarted,
	// SubOrchestrationScheduled), the activity name (ActivityScheduled),
	// the event name (ExternalSubscribed, ExternalEvent, …) or the change
	// id (PatchRecorded).
	Name string `json:"name,omitempty"`
	// InstanceID is the instance the execution belongs to
	// (OrchestrationStarted), the child's (SubOrchestrationScheduled,
	// OrchestrationChained) or the one an event is sent to
	// (ExternalEventSent).
	InstanceID string `json:"instanceId,omitempty"`
	// Persistent marks an event sent as a persistent one
	// (ExternalEventSent).
	Persistent bool `json:"persistent,omitempty"`
	// Input is the JSON input of the orchestration or activity.
	Input json.RawMessage `json:"input,omitempty"`
	// TimeoutMs is the deadline, in milliseconds, the orchestration set
	// for each attempt of the activity (ActivityScheduled); zero leaves it
	// to the host's --activity-timeout.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// TaskQueue is the task queue of the activity's tasks
	// (ActivityScheduled): empty runs it in the module, in the host; a
	// name gives it to the workers that serve that queue.
	TaskQueue string `json:"taskQueue,omitempty"`
	// HeartbeatTimeoutMs is how long, in milliseconds, an attempt of the
	// activity may go without a heartbeat before it counts as failed
	// (ActivityScheduled); zero asks for no heartbeat.
	HeartbeatTimeoutMs int64 `json:"heartbeatTimeoutMs,omitempty"`
	// Retry is how the host retries a failed attempt of the activity
	// (ActivityScheduled); nil: one attempt.
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Attempts is how many attempts the activity took, the last one
	// included, when its call had a retry policy (ActivityCompleted,
	// ActivityFailed); zero when it had none. The failed attempts before
	// the last are in no event: the host retried them (RetryPolicy.Next).
	Attempts int64 `json:"attempts,omitempty"`
	// Result is the JSON result of an activity or of the orchestration;
	// on the OrchestrationStarted of a schedule's run, the result of the
	// schedule's last run (ScheduledStart).
	Result json.RawMessage `json:"result,omitempty"`
	// Failure is why an activity or the orchestration failed; on the
	// OrchestrationStarted of a schedule's run, why its last run failed.
	Failure *Failure `json:"failure,omitempty"`
	// FireAt is when a timer is due (TimerCreated, TimerFired).
	FireAt *time.Time `json:"fireAt,omitempty"`
	// Reason says why cancellation was requested
	// (OrchestrationCancelRequested) or the instance was terminated
	// (OrchestrationTerminated), or what a reset kept (ExecutionReset).
	Reason string `json:"reason,omitempty"`
	// CustomStatus is the status text the orchestration set
	// (CustomStatusSet).
	CustomStatus string `json:"customStatus,omitempty"`
	// Module is the module the instance runs on from this event on, and
	// FromModule the one it ran on before (ModuleChanged, ExecutionReset).
	Module     string `json:"module,omitempty"`
	FromModule string `json:"fromModule,omitempty"`
	// SeedExecution is the execution whose random seed a reset execution
	// keeps (ExecutionReset).
	SeedExecution int64 `json:"seedExecution,omitempty"`
	// UpdateID is the id of an update, unique in its instance
	// (UpdateAccepted, UpdateCompleted).
	UpdateID string `json:"updateId,omitempty"`
	// HistoryWarning is the length of history, in events, past which the
	// execution's orchestration is told to continue as new
	// (abi.Activation.ContinueAsNewSuggested): the caller's setting
	// (TurnInput.HistoryWarning) when the engine recorded the execution's
	// OrchestrationStarted, kept there so that every replay is told the
	// same whatever the setting is by then. Zero (an execution recorded
	// without it) means never.
	HistoryWarning int64 `json:"historyWarning,omitempty"`
	// By names who asked for the event through the host's API: the name of
	// the token of the request that started the instance
	// (OrchestrationStarted), raised the event (ExternalEvent,
	// ExternalEventPersistent), sent the update (UpdateAccepted), asked to
	// cancel or terminate it (OrchestrationCancelRequested,
	// OrchestrationTerminated), reset it (ExecutionReset) or upgraded it
	// (ModuleChanged). Empty for what the host or an orchestration did
	// itself. It is a record for people: the engine never reads it, and
	// replay compares nothing by it.
	By string `json:"by,omitempty"`
}

// Failure describes an error from an activity or an orchestration.
type Failure struct {
	// Message is the error text.
	Message string `json:"message"`
	// Details is extra diagnostic text, such as a stack trace.
	Details string `json:"details,omitempty"`
	// Type is the error's type, a name the failing code chose
	// (durabox.NewError); a retry policy does not retry the types it
	// lists as non-retryable. Empty: none.
	Type string `json:"type,omitempty"`
}

func (f *Failure) Error() string { return f.Message }

// known reports whether k is a kind of event an engine writes.
func (k EventKind) known() bool {
	switch k {
	case OrchestrationStarted, ActivityScheduled, ActivityCompleted, ActivityFailed, TimerCreated, TimerFired, TimerCancelled,
		ActivityCancelRequested, ExternalSubscribed, ExternalSubscribedPersistent, ExternalSubscribedCancelled, ExternalEvent,
		ExternalEventPersistent, SubOrchestrationScheduled, SubOrchestrationCompleted, SubOrchestrationFailed,
		SubOrchestrationCancelRequested, OrchestrationChained, CustomStatusSet, AttributesSet, OrchestrationCancelRequested,
		OrchestrationCompleted, OrchestrationFailed, OrchestrationCanceled, OrchestrationContinuedAsNew, OrchestrationTerminated,
		PatchRecorded, ModuleChanged, ExecutionReset, ExternalEventSent, ExternalEventDelivered, ExternalEventNotDelivered,
		UpdateAccepted, UpdateCompleted:
		return true
	}
	return false
}

// lacks names the field the event's kind requires that it lacks: the
// Failure of a failure, the FireAt of a new timer; "" when it has them.
func (e *Event) lacks() string {
	switch {
	case e.Failure == nil && (e.Kind == ActivityFailed || e.Kind == SubOrchestrationFailed || e.Kind == OrchestrationFailed ||
		e.Kind == OrchestrationCanceled || e.Kind == ExternalEventNotDelivered):
		return "failure"
	case e.FireAt == nil && e.Kind == TimerCreated:
		return "fire time"
	case e.UpdateID == "" && (e.Kind == UpdateAccepted || e.Kind == UpdateCompleted):
		return "update id"
	}
	return ""
}

// isSchedule reports whether the event records a command: it must match the
// command the orchestration emits at the same position.
func (e *Event) isSchedule() bool {
	switch e.Kind {
	case ActivityScheduled, TimerCreated, TimerCancelled, ActivityCancelRequested,
		ExternalSubscribed, ExternalSubscribedPersistent, ExternalSubscribedCancelled,
		SubOrchestrationScheduled, SubOrchestrationCancelRequested, OrchestrationChained, CustomStatusSet, AttributesSet, PatchRecorded,
		ExternalEventSent, UpdateCompleted, OrchestrationCompleted, OrchestrationFailed, OrchestrationCanceled, OrchestrationContinuedAsNew:
		return true
	}
	return false
}

// isMarker reports whether the event is one the host records about the
// instance rather than about its orchestration (a move, a reset): it is
// neither a command nor information for the guest.
func (e *Event) isMarker() bool { return e.Kind == ModuleChanged || e.Kind == ExecutionReset }

// startsStep reports whether the event is one the orchestration reacts to
// (a start, a completion, a raised event, a cancellation request): the
// commands it emits in reaction follow it in history.
func (e *Event) startsStep() bool { return !e.isSchedule() && !e.isMarker() }

// IsTerminal reports whether the event ends its execution.
func (e *Event) IsTerminal() bool {
	switch e.Kind {
	case OrchestrationCompleted, OrchestrationFailed, OrchestrationCanceled, OrchestrationContinuedAsNew, OrchestrationTerminated:
		return true
	}
	return false
}

// String describes the event for people, in the form nondeterminism errors
// use: ActivityScheduled("SayHello", "world").
func (e *Event) String() string {
	switch e.Kind {
	case OrchestrationStarted:
		return fmt.Sprintf("%s(%q, %s)", e.Kind, e.Name, orNull(e.Input))
	case OrchestrationContinuedAsNew:
		return fmt.Sprintf("%s(%s)", e.Kind, orNull(e.Input))
	case OrchestrationCancelRequested, OrchestrationTerminated:
		return fmt.Sprintf("%s(%q)", e.Kind, e.Reason)
	case CustomStatusSet:
		return fmt.Sprintf("%s(%q)", e.Kind, e.CustomStatus)
	case AttributesSet:
		return fmt.Sprintf("%s(%s)", e.Kind, orNull(e.Input))
	case PatchRecorded:
		return fmt.Sprintf("%s(%q)", e.Kind, e.Name)
	case ModuleChanged:
		return fmt.Sprintf("%s(%s → %s)", e.Kind, shortHash(e.FromModule), shortHash(e.Module))
	case ExecutionReset:
		return fmt.Sprintf("%s(%q)", e.Kind, e.Reason)
	case ActivityScheduled:
		return fmt.Sprintf("%s(%q, %s%s)", e.Kind, e.Name, orNull(e.Input), describeCall(e.TimeoutMs, e.TaskQueue, e.HeartbeatTimeoutMs, e.Retry))
	case ActivityCompleted:
		return fmt.Sprintf("%s(event %d, %s%s)", e.Kind, e.ScheduleID, orNull(e.Result), describeAttempts(e.Attempts))
	case ActivityFailed:
		return fmt.Sprintf("%s(event %d, %s%s)", e.Kind, e.ScheduleID, quoteFailure(e.Failure), describeAttempts(e.Attempts))
	case TimerCreated:
		if e.FireAt == nil {
			return fmt.Sprintf("%s(no fire time)", e.Kind)
		}
		return fmt.Sprintf("%s(%s)", e.Kind, e.FireAt.UTC().Format(time.RFC3339Nano))
	case TimerFired, TimerCancelled, ActivityCancelRequested, ExternalSubscribedCancelled, SubOrchestrationCancelRequested:
		return fmt.Sprintf("%s(event %d)", e.Kind, e.ScheduleID)
	case SubOrchestrationScheduled, OrchestrationChained:
		return fmt.Sprintf("%s(%q, %q, %s)", e.Kind, e.Name, e.InstanceID, orNull(e.Input))
	case SubOrchestrationCompleted:
		return fmt.Sprintf("%s(event %d, %s)", e.Kind, e.ScheduleID, orNull(e.Result))
	case SubOrchestrationFailed:
		return fmt.Sprintf("%s(event %d, %s)", e.Kind, e.ScheduleID, quoteFailure(e.Failure))
	case ExternalSubscribed, ExternalSubscribedPersistent:
		return fmt.Sprintf("%s(%q)", e.Kind, e.Name)
	case ExternalEvent:
		return fmt.Sprintf("%s(%q, %s, for event %d)", e.Kind, e.Name, orNull(e.Result), e.ScheduleID)
	case ExternalEventPersistent:
		return fmt.Sprintf("%s(%q, %s)", e.Kind, e.Name, orNull(e.Result))
	case ExternalEventSent:
		return fmt.Sprintf("%s(%q, %q, %s%s)", e.Kind, e.InstanceID, e.Name, orNull(e.Input), describePersistent(e.Persistent))
	case ExternalEventDelivered:
		return fmt.Sprintf("%s(event %d)", e.Kind, e.ScheduleID)
	case ExternalEventNotDelivered:
		return fmt.Sprintf("%s(event %d, %s)", e.Kind, e.ScheduleID, quoteFailure(e.Failure))
	case UpdateAccepted:
		return fmt.Sprintf("%s(%q, %q, %s)", e.Kind, e.UpdateID, e.Name, orNull(e.Input))
	case UpdateCompleted:
		if e.Failure != nil {
			return fmt.Sprintf("%s(%q, failed %s)", e.Kind, e.UpdateID, quoteFailure(e.Failure))
		}
		return fmt.Sprintf("%s(%q, %s)", e.Kind, e.UpdateID, orNull(e.Result))
	case OrchestrationCompleted:
		return fmt.Sprintf("%s(%s)", e.Kind, orNull(e.Result))
	case OrchestrationFailed, OrchestrationCanceled:
		return fmt.Sprintf("%s(%s)", e.Kind, quoteFailure(e.Failure))
	}
	return string(e.Kind)
}

// quoteFailure quotes a failure's message for Event.String, which also
// describes events a corrupt history holds.
func quoteFailure(f *Failure) string {
	if f == nil {
		return "no failure"
	}
	return strconv.Quote(f.Message)
}

// shortHash abbreviates a module hash, as people see it.
func shortHash(hash string) string { return hash[:min(len(hash), 12)] }

func orNull(b json.RawMessage) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}
