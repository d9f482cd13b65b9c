package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestScheduleAcrossAKill: a schedule every second fires its slots on a
// durabox serve, which is killed (SIGKILL) and started again on the same
// file two seconds later: each slot, those of the downtime too, fires
// once, in order, with no gap and no second run.
func TestScheduleAcrossAKill(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	s := startServer(t, db)
	wasm, err := guestbuild.Wasm("host/testdata/guests/scheduled")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.client().Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client().CreateSchedule(ctx, api.ScheduleRequest{Name: "tick", Every: "1s", Orchestration: "Count",
		Input: json.RawMessage(`{}`), Overlap: "allow-all"}); err != nil {
		t.Fatal(err)
	}
	runs := func(atLeast int) api.Schedule {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			sc, err := s.client().Schedule(ctx, "tick")
			if err == nil && len(sc.Runs) >= atLeast {
				return sc
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the schedule did not decide %d slots in 60s:\n%s", atLeast, s.output())
		return api.Schedule{}
	}
	before := len(runs(2).Runs)
	s.kill(t)
	time.Sleep(2 * time.Second)
	s = startServerAt(t, db, "127.0.0.1:0")
	sc := runs(before + 3)
	seen := map[string]bool{}
	for i, r := range sc.Runs { // newest first
		if r.Outcome != "started" || seen[r.InstanceID] {
			t.Fatalf("run %+v: want each started once; runs %+v", r, sc.Runs)
		}
		seen[r.InstanceID] = true
		if i > 0 && !sc.Runs[i-1].Slot.Equal(r.Slot.Add(time.Second)) {
			t.Fatalf("slot %v follows %v: want one every second, none missed; runs %+v", sc.Runs[i-1].Slot, r.Slot, sc.Runs)
		}
	}
	if sc.Started != int64(len(sc.Runs)) || sc.Missed != 0 {
		t.Fatalf("schedule %+v; want every run it recorded started, none missed", sc)
	}
}
