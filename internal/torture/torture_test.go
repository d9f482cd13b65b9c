package torture

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

// TestShortRun is the short form of make crashtest: a smaller workload
// through 4 kills. It fails if anything was lost.
func TestShortRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills real processes for a while; make crashtest runs the full test")
	}
	var out strings.Builder
	r, err := Run(Config{Kills: 4, Scale: 2, MinUp: 200 * time.Millisecond, MaxUp: 900 * time.Millisecond, Deadline: time.Minute, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%s%s", out.String(), r.Summary())
	if len(r.Violations) > 0 || r.Kills != 4 {
		t.Fatalf("%s", r.Summary())
	}
	// Each order's two lines and its submit, answered once each.
	if r.Updates != 3*2 || r.Queries != 3*2 {
		t.Fatalf("%d updates answered and %d queries; want 6 and 6", r.Updates, r.Queries)
	}
}

// TestShortRunWithWorkers is TestShortRun with every activity in two
// worker processes outside the host, killed too (make crashtest-workers
// runs it longer).
func TestShortRunWithWorkers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills real processes for a while; make crashtest-workers runs the full test")
	}
	var out strings.Builder
	r, err := Run(Config{Kills: 4, Scale: 2, Workers: 2, MinUp: 200 * time.Millisecond, MaxUp: 900 * time.Millisecond, Deadline: 2 * time.Minute, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%s%s", out.String(), r.Summary())
	if len(r.Violations) > 0 || r.Kills != 4 || r.Marks == 0 {
		t.Fatalf("%s", r.Summary())
	}
}

// TestCheckUpdates shows the update check finds each kind of damage it
// looks for.
func TestCheckUpdates(t *testing.T) {
	t.Parallel()
	accepted := engine.Event{Kind: engine.UpdateAccepted, UpdateID: "u1"}
	answered := engine.Event{Kind: engine.UpdateCompleted, UpdateID: "u1", Result: []byte(`1`)}
	ok := map[string]api.Update{"u1": {State: "Completed", Result: []byte(`1`)}}
	for _, tt := range []struct {
		name    string
		history []engine.Event
		answers map[string]api.Update
		want    string // "" for none
	}{
		{"good", []engine.Event{accepted, answered}, ok, ""},
		{"answered twice", []engine.Event{accepted, answered, answered}, ok, "answered update u1 twice"},
		{"accepted twice", []engine.Event{accepted, accepted, answered}, ok, "is accepted 2 times"},
		{"another answer", []engine.Event{accepted, answered}, map[string]api.Update{"u1": {State: "Completed", Result: []byte(`2`)}}, "answered the driver 2, and its history says 1"},
		{"refused, in history", []engine.Event{accepted}, map[string]api.Update{"u1": {State: "Refused"}}, "refused update u1, and its history has it"},
		{"never sent", []engine.Event{accepted, answered}, nil, "accepted update u1, which the driver has no answer for"},
		{"lost", nil, ok, "is accepted 0 times in its history and answered false"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f findings
			f.checkUpdates("order-1", [][]engine.Event{tt.history}, tt.answers)
			got := strings.Join(f.violations, "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("violations %q; want %q", got, tt.want)
			}
		})
	}
}

// TestWellFormed shows the history check finds each kind of damage it
// looks for.
func TestWellFormed(t *testing.T) {
	t.Parallel()
	ev := func(id int64, kind engine.EventKind, schedule int64) engine.Event {
		return engine.Event{ID: id, Kind: kind, ScheduleID: schedule}
	}
	start, end := ev(1, engine.OrchestrationStarted, 0), engine.OrchestrationCompleted
	child := func(id int64, instance string) engine.Event {
		e := ev(id, engine.SubOrchestrationScheduled, 0)
		e.InstanceID = instance
		return e
	}
	for _, tt := range []struct {
		name    string
		history []engine.Event
		want    string // "" for a good history
	}{
		{"good", []engine.Event{start, ev(2, engine.ActivityScheduled, 0), ev(3, engine.TimerCreated, 0),
			ev(4, engine.ActivityCompleted, 2), ev(5, engine.TimerCancelled, 3), ev(6, end, 0)}, ""},
		{"gap", []engine.Event{start, ev(2, engine.ActivityScheduled, 0), ev(4, engine.ActivityCompleted, 2), ev(5, end, 0)},
			"event 3 of the history has id 4 (a gap or a duplicate)"},
		{"duplicate id", []engine.Event{start, ev(2, engine.ActivityScheduled, 0), ev(2, engine.ActivityCompleted, 2), ev(4, end, 0)},
			"event 3 of the history has id 2 (a gap or a duplicate)"},
		{"completion without schedule", []engine.Event{start, ev(2, engine.ActivityCompleted, 7), ev(3, end, 0)},
			`event 2 (ActivityCompleted) closes event 7, which is "", not an earlier ActivityScheduled`},
		{"completion of another kind", []engine.Event{start, ev(2, engine.TimerCreated, 0), ev(3, engine.ActivityCompleted, 2), ev(4, end, 0)},
			`closes event 2, which is "TimerCreated", not an earlier ActivityScheduled`},
		{"completed twice", []engine.Event{start, ev(2, engine.ActivityScheduled, 0), ev(3, engine.ActivityCompleted, 2),
			ev(4, engine.ActivityFailed, 2), ev(5, end, 0)}, "event 4 (ActivityFailed) closes event 2, which event 3 closed already"},
		{"fired after cancel", []engine.Event{start, ev(2, engine.TimerCreated, 0), ev(3, engine.TimerCancelled, 2),
			ev(4, engine.TimerFired, 2), ev(5, end, 0)}, "which event 3 closed already"},
		{"left open", []engine.Event{start, ev(2, engine.ActivityScheduled, 0), ev(3, end, 0)},
			"ended with events 2 (ActivityScheduled) neither completed nor cancelled"},
		{"raise left open", []engine.Event{start, ev(2, engine.ExternalEventSent, 0), ev(3, end, 0)},
			"ended with events 2 (ExternalEventSent) neither completed nor cancelled"},
		{"left open by a failure", []engine.Event{start, ev(2, engine.ActivityScheduled, 0), ev(3, engine.OrchestrationFailed, 0)}, ""},
		{"child started twice", []engine.Event{start, child(2, "p:2"), child(3, "p:2"), ev(4, engine.SubOrchestrationCompleted, 2),
			ev(5, engine.SubOrchestrationCompleted, 3), ev(6, end, 0)}, "event 3 starts child p:2, which event 2 started already"},
		{"started twice", []engine.Event{start, start, ev(3, end, 0)}, "a history starts with OrchestrationStarted, once"},
		{"events after the end", []engine.Event{start, ev(2, end, 0), ev(3, engine.CustomStatusSet, 0)}, "ends the execution, and 1 events follow it"},
		{"unfinished", []engine.Event{start, ev(2, engine.ActivityScheduled, 0)}, "does not end with the end of the execution"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(wellFormed(tt.history), "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("problems:\n%s\nwant one saying %q", got, tt.want)
			}
		})
	}
}

// TestCheckRaised shows the event check finds an event dropped while the
// instance waited, and one nobody raised.
func TestCheckRaised(t *testing.T) {
	t.Parallel()
	raised := []raise{{by: byEarly}, {by: byWait, afterWait: true}, {by: byLate, afterWait: true}}
	for _, tt := range []struct {
		name  string
		taken []string
		want  string
	}{
		{"the one raised while waiting", []string{byWait}, ""},
		{"an early one that arrived after the wait began", []string{byEarly}, ""},
		{"a later one", []string{byLate}, `took the Approval by "someone late", raised after the one by "the approver"`},
		{"one nobody raised", []string{"a stranger"}, `took an Approval by "a stranger", which nobody raised`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f findings
			f.checkRaised("approve-0", raised, tt.taken)
			got := strings.Join(f.violations, "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("violations:\n%s\nwant one saying %q", got, tt.want)
			}
		})
	}
}

// TestCheckMarks shows the activity check finds a Mark that completed
// without running, and one run twice under the same delivery number.
func TestCheckMarks(t *testing.T) {
	t.Parallel()
	history := []engine.Event{
		{ID: 1, Kind: engine.OrchestrationStarted},
		{ID: 2, Kind: engine.ActivityScheduled, Name: "Mark", Input: []byte(`{"key":"k"}`)},
		{ID: 3, Kind: engine.ActivityCompleted, ScheduleID: 2},
		{ID: 4, Kind: engine.OrchestrationCompleted},
	}
	for _, tt := range []struct {
		name      string
		runs      []int
		want      string
		wantRerun int
	}{
		{"ran once", []int{1}, "", 0},
		{"ran again after a kill", []int{1, 3}, "", 1},
		{"never ran", nil, `activity Mark "k" completed, and it never ran`, 0},
		{"same delivery twice", []int{1, 1}, `ran 2 times, with delivery numbers [1 1]`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f findings
			f.checkMarks("tally-0", history, map[string][]int{"k": tt.runs})
			got := strings.Join(f.violations, "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) || f.rerun != tt.wantRerun {
				t.Errorf("violations:\n%s\nrerun %d; want one saying %q, rerun %d", got, f.rerun, tt.want, tt.wantRerun)
			}
		})
	}
}
