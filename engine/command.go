package engine

import (
	"bytes"
	"fmt"
	"math"
	"time"

	"github.com/durabox/durabox/abi"
)

// emitted is a command the guest emitted and history has not yet recorded,
// with the logical time of the activation that emitted it.
type emitted struct {
	cmd abi.Command
	at  time.Time
}

// describeCommand formats a command the way nondeterminism errors show it.
func describeCommand(c *abi.Command) string {
	switch c.Kind {
	case abi.CommandScheduleActivity:
		return fmt.Sprintf("ScheduleActivity(%q, %s%s)", c.Name, orNull(c.Input), describeCall(int64(c.TimeoutMillis), c.TaskQueue, int64(c.HeartbeatTimeoutMillis), retryPolicyFrom(c.Retry)))
	case abi.CommandStartTimer:
		return fmt.Sprintf("StartTimer(%s)", time.Duration(c.Delay))
	case abi.CommandComplete:
		return fmt.Sprintf("CompleteOrchestration(%s)", orNull(c.Output))
	case abi.CommandFail:
		msg := ""
		if c.Failure != nil {
			msg = c.Failure.Message
		}
		return fmt.Sprintf("FailOrchestration(%q)", msg)
	case abi.CommandCancelTimer:
		return fmt.Sprintf("CancelTimer(command %d)", c.Target)
	case abi.CommandCancelActivity:
		return fmt.Sprintf("CancelActivity(command %d)", c.Target)
	case abi.CommandWaitEvent:
		return fmt.Sprintf("WaitEvent(%q)", c.Name)
	case abi.CommandWaitEventPersistent:
		return fmt.Sprintf("WaitEventPersistent(%q)", c.Name)
	case abi.CommandCancelWait:
		return fmt.Sprintf("CancelWait(command %d)", c.Target)
	case abi.CommandContinueAsNew:
		return fmt.Sprintf("ContinueAsNew(%s)", orNull(c.Output))
	case abi.CommandStartChild:
		kind := "StartChild"
		if c.Detached {
			kind = "StartDetachedChild"
		}
		return fmt.Sprintf("%s(%q, %q, %s)", kind, c.Name, c.InstanceID, orNull(c.Input))
	case abi.CommandCancelChild:
		return fmt.Sprintf("CancelChild(command %d)", c.Target)
	case abi.CommandSetCustomStatus:
		return fmt.Sprintf("SetCustomStatus(%q)", c.Name)
	case abi.CommandSetAttributes:
		return fmt.Sprintf("SetAttributes(%s)", orNull(c.Input))
	case abi.CommandPatch:
		return fmt.Sprintf("Patch(%q)", c.Name)
	case abi.CommandRaise:
		return fmt.Sprintf("Raise(%q, %q, %s%s)", c.InstanceID, c.Name, orNull(c.Input), describePersistent(c.Persistent))
	case abi.CommandCompleteUpdate:
		if c.Failure != nil {
			return fmt.Sprintf("CompleteUpdate(%q, failed %q)", c.UpdateID, c.Failure.Message)
		}
		return fmt.Sprintf("CompleteUpdate(%q, %s)", c.UpdateID, orNull(c.Output))
	case abi.CommandRejectUpdate:
		msg := ""
		if c.Failure != nil {
			msg = c.Failure.Message
		}
		return fmt.Sprintf("RejectUpdate(%q, %q)", c.UpdateID, msg)
	}
	return fmt.Sprintf("unknown command kind %d", c.Kind)
}

// describeCall describes an activity call's options for describeCommand
// and Event.String: its timeout, its task queue, its heartbeat timeout and
// its retry policy, each when set; nothing when the host's defaults apply.
func describeCall(timeoutMs int64, queue string, heartbeatMs int64, retry *RetryPolicy) string {
	var s string
	if timeoutMs != 0 {
		s += fmt.Sprintf(", timeout %s", time.Duration(timeoutMs)*time.Millisecond)
	}
	if queue != "" {
		s += fmt.Sprintf(", queue %q", queue)
	}
	if heartbeatMs != 0 {
		s += fmt.Sprintf(", heartbeat timeout %s", time.Duration(heartbeatMs)*time.Millisecond)
	}
	if retry != nil {
		s += ", " + retry.String()
	}
	return s
}

// describePersistent marks a persistent raise for describeCommand and
// Event.String: nothing for a positional one.
func describePersistent(persistent bool) string {
	if persistent {
		return ", persistent"
	}
	return ""
}

// MaxTime is the latest time an event records: the latest a store that
// keeps times as Unix nanoseconds in an int64 can hold (2262-04-11). A
// timer due later is due at MaxTime instead, which is never in practice;
// without the bound, its time would wrap around in such a store and the
// timer would fire at once.
var MaxTime = time.Unix(0, math.MaxInt64).UTC()

// eventFor turns a new command into the history event that records it; the
// caller assigns its ID and Time. target is the schedule event a cancel
// command names.
func eventFor(e emitted, target int64) Event {
	var ev Event
	c := &e.cmd
	switch c.Kind {
	case abi.CommandScheduleActivity:
		ev.Kind, ev.Name, ev.Input, ev.TimeoutMs = ActivityScheduled, c.Name, c.Input, int64(c.TimeoutMillis)
		ev.TaskQueue, ev.HeartbeatTimeoutMs, ev.Retry = c.TaskQueue, int64(c.HeartbeatTimeoutMillis), retryPolicyFrom(c.Retry)
	case abi.CommandStartTimer:
		fireAt := e.at.Add(time.Duration(c.Delay))
		if fireAt.After(MaxTime) {
			fireAt = MaxTime
		}
		ev.Kind, ev.FireAt = TimerCreated, &fireAt
	case abi.CommandComplete:
		ev.Kind, ev.Result = OrchestrationCompleted, c.Output
	case abi.CommandFail:
		ev.Kind, ev.Failure = OrchestrationFailed, failureFrom(c.Failure)
	case abi.CommandCancelTimer:
		ev.Kind, ev.ScheduleID = TimerCancelled, target
	case abi.CommandCancelActivity:
		ev.Kind, ev.ScheduleID = ActivityCancelRequested, target
	case abi.CommandWaitEvent:
		ev.Kind, ev.Name = ExternalSubscribed, c.Name
	case abi.CommandWaitEventPersistent:
		ev.Kind, ev.Name = ExternalSubscribedPersistent, c.Name
	case abi.CommandCancelWait:
		ev.Kind, ev.ScheduleID = ExternalSubscribedCancelled, target
	case abi.CommandContinueAsNew:
		ev.Kind, ev.Input = OrchestrationContinuedAsNew, c.Output
	case abi.CommandStartChild:
		ev.Kind, ev.Name, ev.Input, ev.InstanceID = SubOrchestrationScheduled, c.Name, c.Input, c.InstanceID
		if c.Detached {
			ev.Kind = OrchestrationChained
		}
	case abi.CommandCancelChild:
		ev.Kind, ev.ScheduleID = SubOrchestrationCancelRequested, target
	case abi.CommandSetCustomStatus:
		ev.Kind, ev.CustomStatus = CustomStatusSet, c.Name
	case abi.CommandSetAttributes:
		ev.Kind, ev.Input = AttributesSet, c.Input
	case abi.CommandPatch:
		ev.Kind, ev.Name = PatchRecorded, c.Name
	case abi.CommandRaise:
		ev.Kind, ev.InstanceID, ev.Name, ev.Input, ev.Persistent = ExternalEventSent, c.InstanceID, c.Name, c.Input, c.Persistent
	case abi.CommandCompleteUpdate:
		ev.Kind, ev.UpdateID = UpdateCompleted, c.UpdateID
		if c.Failure != nil {
			ev.Failure = failureFrom(c.Failure)
		} else {
			ev.Result = c.Output
		}
	}
	return ev
}

// matches reports whether a command is the one a schedule event records.
// Timers match by position: their fire time derives from the clock and is
// not compared. target is the schedule event a cancel command names.
func matches(c *abi.Command, target int64, ev *Event) bool {
	switch ev.Kind {
	case TimerCancelled:
		return c.Kind == abi.CommandCancelTimer && target == ev.ScheduleID
	case ActivityCancelRequested:
		return c.Kind == abi.CommandCancelActivity && target == ev.ScheduleID
	case ExternalSubscribedCancelled:
		return c.Kind == abi.CommandCancelWait && target == ev.ScheduleID
	case ExternalSubscribed:
		return c.Kind == abi.CommandWaitEvent && c.Name == ev.Name
	case ExternalSubscribedPersistent:
		return c.Kind == abi.CommandWaitEventPersistent && c.Name == ev.Name
	case ActivityScheduled:
		return c.Kind == abi.CommandScheduleActivity && c.Name == ev.Name && bytes.Equal(c.Input, ev.Input) && int64(c.TimeoutMillis) == ev.TimeoutMs &&
			c.TaskQueue == ev.TaskQueue && int64(c.HeartbeatTimeoutMillis) == ev.HeartbeatTimeoutMs && sameRetry(c.Retry, ev.Retry)
	case TimerCreated:
		return c.Kind == abi.CommandStartTimer
	case OrchestrationCompleted:
		return c.Kind == abi.CommandComplete && bytes.Equal(c.Output, ev.Result)
	case OrchestrationFailed, OrchestrationCanceled:
		return c.Kind == abi.CommandFail
	case OrchestrationContinuedAsNew:
		return c.Kind == abi.CommandContinueAsNew && bytes.Equal(c.Output, ev.Input)
	case SubOrchestrationScheduled, OrchestrationChained:
		return c.Kind == abi.CommandStartChild && c.Detached == (ev.Kind == OrchestrationChained) &&
			c.Name == ev.Name && bytes.Equal(c.Input, ev.Input) && (c.InstanceID == "" || c.InstanceID == ev.InstanceID)
	case SubOrchestrationCancelRequested:
		return c.Kind == abi.CommandCancelChild && target == ev.ScheduleID
	case CustomStatusSet:
		return c.Kind == abi.CommandSetCustomStatus && c.Name == ev.CustomStatus
	case AttributesSet:
		return c.Kind == abi.CommandSetAttributes && bytes.Equal(c.Input, ev.Input)
	case PatchRecorded:
		return c.Kind == abi.CommandPatch && c.Name == ev.Name
	case ExternalEventSent:
		return c.Kind == abi.CommandRaise && c.InstanceID == ev.InstanceID && c.Name == ev.Name &&
			bytes.Equal(c.Input, ev.Input) && c.Persistent == ev.Persistent
	case UpdateCompleted:
		if c.Kind != abi.CommandCompleteUpdate || c.UpdateID != ev.UpdateID || (c.Failure == nil) != (ev.Failure == nil) {
			return false
		}
		if c.Failure != nil {
			return c.Failure.Message == ev.Failure.Message
		}
		return bytes.Equal(c.Output, ev.Result)
	}
	return false
}

// isCancel reports whether a command cancels another.
func isCancel(c *abi.Command) bool {
	switch c.Kind {
	case abi.CommandCancelTimer, abi.CommandCancelActivity, abi.CommandCancelWait, abi.CommandCancelChild:
		return true
	}
	return false
}

// cancellable returns the schedule event kinds a cancel command may name.
func cancellable(c *abi.Command) []EventKind {
	switch c.Kind {
	case abi.CommandCancelTimer:
		return []EventKind{TimerCreated}
	case abi.CommandCancelActivity:
		return []EventKind{ActivityScheduled}
	case abi.CommandCancelChild:
		return []EventKind{SubOrchestrationScheduled}
	}
	return []EventKind{ExternalSubscribed, ExternalSubscribedPersistent}
}

func failureFrom(f *abi.Failure) *Failure {
	if f == nil {
		return &Failure{Message: "orchestration failed without a message"}
	}
	return &Failure{Message: f.Message, Details: f.Details, Type: f.Type}
}

func failureTo(f *Failure) *abi.Failure {
	return &abi.Failure{Message: f.Message, Details: f.Details, Type: f.Type}
}
