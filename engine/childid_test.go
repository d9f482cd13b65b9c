package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/durabox/durabox/abi"
)

func TestChildID(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 128)
	for _, tt := range []struct {
		parent           string
		execution, event int64
		want             string
	}{
		{"order-7", 1, 2, "order-7~1:2"},
		{"order-7", 2, 2, "order-7~2:2"},
		{"order-7", 12, 34, "order-7~12:34"},
		{"order-7~1:2", 1, 3, "order-7~1:2~1:3"},
		{long, 1, 2, long + "~1:2"},
	} {
		if got := childID(tt.parent, tt.execution, tt.event); got != tt.want {
			t.Errorf("childID(%q, %d, %d) = %q, want %q", tt.parent, tt.execution, tt.event, got, tt.want)
		}
	}
}

// TestChildIDsNeverCollide: over parents of every form (an id a user
// chose, ones that look like derived ids of the old form and of the new,
// one at the length limit), executions and events, every derived id is
// distinct from every other, from every id a user or an orchestration can
// choose, and from every id of the old form PARENT:EVENT.
func TestChildIDsNeverCollide(t *testing.T) {
	t.Parallel()
	parents := []string{"p", "p:1", "p:1:1", "p~1:1", "p~1:1~1:1", "p1", "p~11:1", "p~1:11", strings.Repeat("p", 128)}
	seen := map[string]string{}
	for _, parent := range parents {
		for execution := int64(1); execution <= 12; execution++ {
			for event := int64(1); event <= 12; event++ {
				id := childID(parent, execution, event)
				what := fmt.Sprintf("parent %q, execution %d, event %d", parent, execution, event)
				if other, ok := seen[id]; ok {
					t.Fatalf("%q is derived for %s and for %s", id, other, what)
				}
				seen[id] = what
				if abi.CheckInstanceID(id) == nil {
					t.Fatalf("%q, derived for %s, is an id a user may choose", id, what)
				}
			}
		}
	}
	for _, parent := range parents {
		for event := int64(1); event <= 12; event++ {
			if other, ok := seen[fmt.Sprintf("%s:%d", parent, event)]; ok {
				t.Fatalf("the old form %s:%d is derived for %s", parent, event, other)
			}
		}
	}
}

// continuer starts a child and a detached instance, then continues as new
// once the child reports.
func continuer(_ *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{
			{Kind: abi.CommandStartChild, Name: "Audit", Input: []byte(`0`), Detached: true},
			{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`1`)},
		}
	case abi.JobResolveChild:
		return []abi.Command{{Kind: abi.CommandContinueAsNew, Output: []byte(`1`)}}
	}
	return nil
}

// TestChildIDsAcrossExecutionsAndResets: the same orchestration starts its
// children at the same events in every execution; each execution, whether
// it follows a continue-as-new or a reset, derives ids of its own, which a
// replay does not derive again (it keeps the ids history records).
func TestChildIDsAcrossExecutionsAndResets(t *testing.T) {
	t.Parallel()
	seen := map[string]int64{}
	record := func(execution int64, children []ChildTask) {
		t.Helper()
		if len(children) != 2 {
			t.Fatalf("execution %d started %d children, want 2", execution, len(children))
		}
		for _, c := range children {
			if other, ok := seen[c.InstanceID]; ok {
				t.Fatalf("execution %d derives %q, which execution %d derived", execution, c.InstanceID, other)
			}
			seen[c.InstanceID] = execution
		}
	}
	// Executions 1 and 2, the second after a continue-as-new.
	var kept []Event
	for execution := int64(1); execution <= 2; execution++ {
		res, err := newExecution(newGuest(continuer)).Turn(TurnInput{Messages: []Event{started(`1`)}, Now: at(0), Execution: execution})
		if err != nil || res.Err != nil {
			t.Fatalf("execution %d: %v, %v", execution, err, res.Err)
		}
		record(execution, res.Children)
		kept = res.NewEvents
	}
	// Executions 3 and 4, each a reset of the one before to its first
	// event, which runs the step that starts the children again.
	for execution := int64(3); execution <= 4; execution++ {
		plan, err := PlanReset(kept, 1)
		if err != nil {
			t.Fatal(err)
		}
		marker := Event{Kind: ExecutionReset, SeedExecution: 1, Reason: "again"}
		res, err := newExecution(newGuest(continuer)).Turn(TurnInput{History: plan.Kept, Messages: []Event{marker}, Now: at(1), Execution: execution})
		if err != nil || res.Err != nil {
			t.Fatalf("execution %d: %v, %v", execution, err, res.Err)
		}
		record(execution, res.Children)
		kept = append(plan.Kept, res.NewEvents...)
	}
	// A replay of the last execution's history, told another execution,
	// keeps the ids its history records.
	res, err := newExecution(newGuest(continuer)).Turn(TurnInput{History: kept, Now: at(2), Execution: 9})
	if err != nil || res.Err != nil || len(res.NewEvents) != 0 {
		t.Fatalf("replay: %v, %v, new events %v", err, res.Err, res.NewEvents)
	}
}

// TestChildIDsAnOrchestrationChooses: an id the orchestration gives its
// child must be one a user could choose (abi.CheckInstanceID), so that it
// never takes an id the host derives; a command with another fails the
// instance, naming it. A history that recorded such an id replays.
func TestChildIDsAnOrchestrationChooses(t *testing.T) {
	t.Parallel()
	emits := func(id string) func(*fakeGuest, abi.Job) []abi.Command {
		return func(_ *fakeGuest, j abi.Job) []abi.Command {
			if j.Kind == abi.JobStart {
				return []abi.Command{{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`1`), InstanceID: id}}
			}
			return nil
		}
	}
	res, err := newExecution(newGuest(emits("p~1:2"))).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0), Execution: 1})
	const want = `engine: the orchestration started child orchestration "Child" as instance "p~1:2", which is not an id an orchestration may choose: abi: instance id "p~1:2" has '~', which only ids the host derives have; an instance id is 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`
	if err != nil || res.Err == nil || res.Err.Error() != want || res.Status != StatusFailed {
		t.Fatalf("err %v / %v (status %s)\nwant %s", err, res.Err, res.Status, want)
	}
	history := hist(started(`null`), Event{Kind: SubOrchestrationScheduled, Name: "Child", Input: []byte(`1`), InstanceID: "p~1:2"})
	res, err = newExecution(newGuest(emits("p~1:2"))).Turn(TurnInput{History: history, Now: at(5)})
	if err != nil || res.Err != nil || res.Status != StatusRunning {
		t.Fatalf("replay of a recorded id: %v, %v, %s", err, res.Err, res.Status)
	}
}
