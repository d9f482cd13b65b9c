package main

import (
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
)

// TestShortCrashRun is the short form of make crashtest: a smaller
// workload through a few kills. It fails if anything was lost.
func TestShortCrashRun(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes for a while; make crashtest runs the full test")
	}
	var out strings.Builder
	s, err := run(config{kills: 4, scale: 1, seed: uint64(time.Now().UnixNano()), minUp: 200 * time.Millisecond, maxUp: 900 * time.Millisecond,
		deadline: 2 * time.Minute, out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(s)
	if len(s.violations) > 0 || s.kills != 4 || !strings.HasSuffix(s.String(), "lost 0") {
		t.Fatalf("%s\n%s", s, out.String())
	}
}

// TestWellFormedCatchesBrokenHistories shows the history check finds each
// kind of damage it looks for.
func TestWellFormedCatchesBrokenHistories(t *testing.T) {
	ev := func(id int64, kind engine.EventKind, schedule int64) engine.Event {
		return engine.Event{ID: id, Kind: kind, ScheduleID: schedule}
	}
	good := []engine.Event{ev(1, engine.OrchestrationStarted, 0), ev(2, engine.ActivityScheduled, 0), ev(3, engine.ActivityCompleted, 2), ev(4, engine.OrchestrationCompleted, 0)}
	if p := wellFormed(good); len(p) != 0 {
		t.Fatalf("a good history: %q", p)
	}
	for _, tt := range []struct {
		name    string
		history []engine.Event
		want    string
	}{
		{"gap", []engine.Event{good[0], good[1], ev(4, engine.ActivityCompleted, 2), ev(5, engine.OrchestrationCompleted, 0)}, "has id 4 (a gap or a duplicate)"},
		{"duplicate id", []engine.Event{good[0], good[1], ev(2, engine.ActivityCompleted, 2), ev(4, engine.OrchestrationCompleted, 0)}, "has id 2 (a gap or a duplicate)"},
		{"completion without schedule", []engine.Event{good[0], ev(2, engine.ActivityCompleted, 7), ev(3, engine.OrchestrationCompleted, 0)}, "completes event 7"},
		{"completed twice", []engine.Event{good[0], good[1], good[2], ev(4, engine.ActivityCompleted, 2), ev(5, engine.OrchestrationCompleted, 0)}, "which event 3 completed already"},
		{"unfinished", good[:3], "does not end with the end of the execution"},
	} {
		p := wellFormed(tt.history)
		if !strings.Contains(strings.Join(p, "\n"), tt.want) {
			t.Errorf("%s: problems %q, want one saying %q", tt.name, p, tt.want)
		}
	}
}
