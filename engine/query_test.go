package engine

import (
	"testing"
)

// TestAReplayWithoutMessagesWritesNothing is the rule a host's query rests
// on: a turn given an execution's committed history and no message (what
// a host runs to rebuild an instance before it asks the guest a query)
// makes nothing to record, whatever the history holds: no new event, no
// activity, timer or child to start, no message for another instance,
// nothing dropped. So a query, answered from the guest after it, writes
// nothing either. Every history of the golden corpus that replays cleanly
// is replayed so.
func TestAReplayWithoutMessagesWritesNothing(t *testing.T) {
	t.Parallel()
	replays := 0
	for _, sc := range scenarios() {
		if sc.edit != nil || sc.replay != nil {
			continue // deliberately bad, or replayed on other code
		}
		t.Run(slug(sc.name), func(t *testing.T) {
			history, code := sc.record(t)
			res, err := newExecution(newGuest(code.handle)).Turn(TurnInput{History: history, Now: history[len(history)-1].Time})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil {
				t.Skipf("its history does not replay cleanly: %v", res.Err)
			}
			if len(res.NewEvents) > 0 || len(res.Activities) > 0 || len(res.Timers) > 0 || len(res.Children) > 0 ||
				len(res.CancelChildren) > 0 || len(res.TerminateChildren) > 0 || len(res.Dropped) > 0 || res.CustomStatus != nil {
				t.Fatalf("a replay without messages made something to record: %+v", res)
			}
		})
		replays++
	}
	if replays < 10 {
		t.Fatalf("only %d histories replayed", replays)
	}
}
