package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/durabox/durabox/abi"
)

func TestChildren(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{
				{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`1`)},
				{Kind: abi.CommandStartChild, Name: "Audit", Input: []byte(`2`), Detached: true},
				{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`3`), InstanceID: "named"},
			}
		case abi.JobResolveChild:
			if j.Failure != nil {
				return []abi.Command{fail(j.Failure.Message)}
			}
			return []abi.Command{complete(string(j.Result))}
		}
		return nil
	}
	for _, live := range []bool{true, false} {
		history, results := drive(t, handle, live, []step{
			{at(0), []Event{started(`null`)}},
			{at(1), []Event{{Kind: SubOrchestrationCompleted, ScheduleID: 2, Result: json.RawMessage(`"child done"`)}}},
		})
		want := []ChildTask{
			{ScheduleID: 2, InstanceID: "i1~1:2", Name: "Child", Input: json.RawMessage(`1`)},
			{ScheduleID: 3, InstanceID: "i1~1:3", Name: "Audit", Input: json.RawMessage(`2`), Detached: true},
			{ScheduleID: 4, InstanceID: "named", Name: "Child", Input: json.RawMessage(`3`)},
		}
		if !reflect.DeepEqual(results[0].Children, want) {
			t.Fatalf("live=%v children %+v", live, results[0].Children)
		}
		wantKinds := []EventKind{OrchestrationStarted, SubOrchestrationScheduled, OrchestrationChained, SubOrchestrationScheduled, SubOrchestrationCompleted, OrchestrationCompleted}
		if got := kinds(history); !reflect.DeepEqual(got, wantKinds) || string(results[1].Result) != `"child done"` {
			t.Fatalf("live=%v history %v result %s", live, got, results[1].Result)
		}
	}
	// A detached child's id is in history, so a replay that derives another
	// is nondeterminism; so is a different explicit id.
	history := hist(started(`null`), Event{Kind: SubOrchestrationScheduled, Name: "Child", Input: json.RawMessage(`1`), InstanceID: "other"})
	g := newGuest(func(_ *fakeGuest, j abi.Job) []abi.Command {
		return []abi.Command{{Kind: abi.CommandStartChild, Name: "Child", Input: []byte(`1`), InstanceID: "named"}}
	})
	res, err := newExecution(g).Turn(TurnInput{History: history, Now: at(5)})
	const wantErr = `nondeterminism at event 2: history has SubOrchestrationScheduled("Child", "other", 1), the orchestration emitted StartChild("Child", "named", 1)`
	if err != nil || res.Err == nil || res.Err.Error() != wantErr {
		t.Fatalf("err %v / %v\nwant %s", err, res.Err, wantErr)
	}
}
