package engine

import "fmt"

// checkHistory refuses a persisted history that no engine could have
// written, before any of it is applied: the events from index from on must
// continue the events before them (lastID is the ID of the last one), an
// execution begins with its one OrchestrationStarted, its IDs run from 1
// without gaps, and nothing follows the event that ended it. Such a history
// was damaged in the store or edited by hand; replaying it would hand the
// orchestration steps that never happened.
func checkHistory(history []Event, from int, lastID int64) error {
	for i := from; i < len(history); i++ {
		ev := &history[i]
		switch {
		case i == 0 && ev.Kind != OrchestrationStarted:
			return fmt.Errorf("%w: it begins with %s, not OrchestrationStarted", ErrCorruptHistory, ev.Kind)
		case ev.ID != lastID+1 && i == 0:
			return fmt.Errorf("%w: its first event has id %d, not 1", ErrCorruptHistory, ev.ID)
		case ev.ID != lastID+1:
			return fmt.Errorf("%w: event %d follows event %d (ids run from 1 without gaps)", ErrCorruptHistory, ev.ID, lastID)
		case i > 0 && ev.Kind == OrchestrationStarted:
			return fmt.Errorf("%w: event %d is a second OrchestrationStarted", ErrCorruptHistory, ev.ID)
		case i > 0 && history[i-1].IsTerminal():
			return fmt.Errorf("%w: event %d, %s, follows the end of the execution (event %d, %s)", ErrCorruptHistory, ev.ID, ev.Kind, history[i-1].ID, history[i-1].Kind)
		}
		lastID = ev.ID
	}
	return nil
}
