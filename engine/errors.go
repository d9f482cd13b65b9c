package engine

import (
	"errors"
	"fmt"
)

// ErrStale is returned by Begin when the history it is given does not extend
// the history the execution has already applied (for example after a turn
// was computed but its commit failed). The caller must drop the Execution
// and replay from scratch on a fresh guest.
var ErrStale = errors.New("engine: history does not continue what this execution applied; replay it on a fresh guest")

// ErrCorruptHistory is returned by Begin when the persisted history it is
// given is not one an engine writes: it does not begin with
// OrchestrationStarted, its event ids skip or repeat, events follow the
// end of the execution, or an event is of an unknown kind or lacks what
// its kind requires (a failure's Failure, a TimerCreated's FireAt).
// Nothing is applied or recorded; the history must be repaired (or the
// instance reset to before the damage) before the instance can run again.
// PlanReset returns it too, for kept events no engine writes.
var ErrCorruptHistory = errors.New("engine: history is corrupt")

// ErrWaitsOnNothing is the failure (in TurnResult.Err) of an instance that
// a turn left running with no operation open: it has not returned, and no
// activity, timer, event wait or child of it is pending, so nothing could
// ever wake it. Rather than stay Running for ever, it fails.
var ErrWaitsOnNothing = errors.New("the orchestration waits on nothing: it has not returned, yet no activity, timer, event wait or child of it is pending, and it handles no update, " +
	"so nothing can ever wake it (did a goroutine not started with ctx.Go use its Context, or did it wait on no future at all?)")

// NondeterminismCode classifies a nondeterminism error. The codes are stable.
type NondeterminismCode string

// The kinds of nondeterminism.
const (
	// MissingCommand: history has a schedule event, the orchestration
	// emitted nothing at that position.
	MissingCommand NondeterminismCode = "missing-command"
	// ExtraCommand: the orchestration emitted a command that history does not
	// have at that position.
	ExtraCommand NondeterminismCode = "extra-command"
	// ReorderedCommand: the orchestration emitted a command that history has,
	// but at a later position.
	ReorderedCommand NondeterminismCode = "reordered-command"
	// ChangedCommand: the orchestration emitted a different command (another
	// kind, name or input) from the one history has at that position.
	ChangedCommand NondeterminismCode = "changed-command"
	// UnmatchedCompletion: history completes an operation that no emitted
	// command scheduled, or completes it twice.
	UnmatchedCompletion NondeterminismCode = "unmatched-completion"
	// RefusedUpdate: history has an update the orchestration accepted,
	// and it refused the update on replay (its handlers or its validator
	// changed).
	RefusedUpdate NondeterminismCode = "refused-update"
)

// NondeterminismError reports that replaying an orchestration did not
// reproduce its history. It shows both sides.
type NondeterminismError struct {
	Code NondeterminismCode
	// EventID is the history event where replay diverged.
	EventID int64
	// History describes the event history has at EventID.
	History string
	// Emitted describes what the orchestration emitted instead ("" when it
	// emitted nothing).
	Emitted string
}

func (e *NondeterminismError) Error() string {
	switch e.Code {
	case MissingCommand:
		return fmt.Sprintf("nondeterminism at event %d: history has %s, the orchestration emitted nothing", e.EventID, e.History)
	case ExtraCommand:
		return fmt.Sprintf("nondeterminism at event %d: history has %s, the orchestration emitted %s, which history does not have", e.EventID, e.History, e.Emitted)
	case ReorderedCommand:
		return fmt.Sprintf("nondeterminism at event %d: history has %s, the orchestration emitted %s, which history has later (commands reordered)", e.EventID, e.History, e.Emitted)
	case UnmatchedCompletion:
		return fmt.Sprintf("nondeterminism at event %d: history has %s, which completes no open operation", e.EventID, e.History)
	case RefusedUpdate:
		return fmt.Sprintf("nondeterminism at event %d: history has %s, which the orchestration accepted, and it refused the update on replay with %s "+
			"(its update handlers or the validator changed)", e.EventID, e.History, e.Emitted)
	}
	return fmt.Sprintf("nondeterminism at event %d: history has %s, the orchestration emitted %s", e.EventID, e.History, e.Emitted)
}

// ErrResetPoint is returned by PlanReset when the event to reset to cannot
// be one: outside history, the execution's end, or the middle of a step.
var ErrResetPoint = errors.New("engine: not a reset point")
