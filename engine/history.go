package engine

import "fmt"

// checkHistory refuses a persisted history that no engine could have
// written, before any of it is applied: the events from index from on must
// continue the events before them (lastID is the ID of the last one, and
// started says whether they hold the OrchestrationStarted). An execution's
// ids run from 1 without gaps; it has one OrchestrationStarted, with
// nothing before it but markers (a ModuleChanged: the instance moved
// before it started); nothing follows the event that ended it; and each
// event is of a kind an engine writes, with what its kind requires (a
// failure's Failure, a timer's FireAt). Such a history was damaged in the
// store or edited by hand; replaying it would hand the orchestration steps
// that never happened.
func checkHistory(history []Event, from int, lastID int64, started bool) error {
	for i := from; i < len(history); i++ {
		ev := &history[i]
		switch {
		case ev.ID != lastID+1 && i == 0:
			return fmt.Errorf("%w: its first event has id %d, not 1", ErrCorruptHistory, ev.ID)
		case ev.ID != lastID+1:
			return fmt.Errorf("%w: event %d follows event %d (ids run from 1 without gaps)", ErrCorruptHistory, ev.ID, lastID)
		case ev.Kind == OrchestrationStarted && started:
			return fmt.Errorf("%w: event %d is a second OrchestrationStarted", ErrCorruptHistory, ev.ID)
		case ev.Kind != OrchestrationStarted && !started && !ev.isMarker():
			return fmt.Errorf("%w: event %d, %s, comes before the execution's OrchestrationStarted", ErrCorruptHistory, ev.ID, ev.Kind)
		case i > 0 && history[i-1].IsTerminal():
			return fmt.Errorf("%w: event %d, %s, follows the end of the execution (event %d, %s)", ErrCorruptHistory, ev.ID, ev.Kind, history[i-1].ID, history[i-1].Kind)
		case !ev.Kind.known():
			return fmt.Errorf("%w: event %d is of kind %q, which no engine writes", ErrCorruptHistory, ev.ID, ev.Kind)
		case ev.lacks() != "":
			return fmt.Errorf("%w: event %d, %s, has no %s", ErrCorruptHistory, ev.ID, ev.Kind, ev.lacks())
		}
		lastID, started = ev.ID, started || ev.Kind == OrchestrationStarted
	}
	return nil
}

// CheckHistory returns an error wrapping ErrCorruptHistory when history,
// the events of one execution as a store keeps them, is not one an engine
// writes: what Begin refuses (ids that skip or repeat, no
// OrchestrationStarted, events after the end, unknown kinds, a kind
// without what it requires), and a completion that names no schedule
// event of its kind before it (an ActivityCompleted whose ScheduleID is
// no ActivityScheduled, say). It is for what checks a stored history
// without running it (durabox check-db); Begin finds the second kind of
// damage as nondeterminism, once the orchestration's code runs.
func CheckHistory(history []Event) error {
	if err := checkHistory(history, 0, 0, false); err != nil {
		return err
	}
	// The ids run from 1 without gaps: event id n is history[n-1].
	for _, ev := range history {
		want := scheduleKind(ev.Kind)
		if want == "" {
			continue
		}
		if ev.ScheduleID < 1 || ev.ScheduleID >= ev.ID || history[ev.ScheduleID-1].Kind != want {
			return fmt.Errorf("%w: event %d, %s, names event %d, which is no %s before it", ErrCorruptHistory, ev.ID, ev.Kind, ev.ScheduleID, want)
		}
	}
	return nil
}

// scheduleKind is the kind of the schedule event that an event of kind k
// names by its ScheduleID, for the kinds that must name one; "" for the
// others.
func scheduleKind(k EventKind) EventKind {
	switch k {
	case ActivityCompleted, ActivityFailed, ActivityCancelRequested:
		return ActivityScheduled
	case TimerFired, TimerCancelled:
		return TimerCreated
	case SubOrchestrationCompleted, SubOrchestrationFailed, SubOrchestrationCancelRequested:
		return SubOrchestrationScheduled
	case ExternalEventDelivered, ExternalEventNotDelivered:
		return ExternalEventSent
	}
	return ""
}

// payloadSize is what an event adds to abi.Activation.HistorySize: the
// bytes of the payloads it carries (names, ids, inputs, results, failures
// and texts), which grow a history as its events' fixed part (a kind, a
// time, ids) does not; HistoryLength counts that part.
func payloadSize(ev *Event) int64 {
	n := len(ev.Name) + len(ev.InstanceID) + len(ev.Input) + len(ev.Result) + len(ev.Reason) + len(ev.CustomStatus) +
		len(ev.Module) + len(ev.FromModule) + len(ev.UpdateID)
	if ev.Failure != nil {
		n += len(ev.Failure.Message) + len(ev.Failure.Details)
	}
	return int64(n)
}
