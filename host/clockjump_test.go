package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
)

// TestClockJumps: the host's clock jumps back an hour and then forward
// past the timers, with two timers waiting (due in 10 and 20 minutes). No
// timer fires before its due time by the clock, nor earlier than the jump
// forward allows; none is lost; each history keeps its order (ids in
// sequence, whatever the times say).
func TestClockJumps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	h, set := clockedHost(t, t0, "examples/wasm/retry")
	delays := map[string]time.Duration{"r10": 10 * time.Minute, "r20": 20 * time.Minute}
	for id, d := range delays {
		in, _ := json.Marshal(map[string]any{"failures": 1, "attempts": 2, "delay": d.String()})
		if _, err := h.Start(ctx, "Retry", in, id); err != nil {
			t.Fatal(err)
		}
	}
	// step runs every turn and activity due at now, until none is.
	step := func(now time.Time) {
		for {
			turns, err := h.RunTurns(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			acts, err := h.RunActivities(ctx, now, false)
			if err != nil {
				t.Fatal(err)
			}
			if turns+acts == 0 {
				return
			}
		}
	}
	fired := func(id string) bool {
		history, err := h.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range history {
			if e.Kind == engine.TimerFired {
				return true
			}
		}
		return false
	}
	step(t0) // each calls FlakyTask, which fails, and sets its timer
	for _, at := range []time.Time{
		t0.Add(-time.Hour),                  // the clock jumps back an hour
		t0.Add(-time.Hour + 25*time.Minute), // and runs on: each timer is due at t0 plus its delay, by the clock
		t0.Add(9 * time.Minute),             // the clock is back past t0
	} {
		step(set(at))
		for id := range delays {
			if fired(id) {
				t.Fatalf("at %s, %s's timer fired; it is due at %s", at.Format(time.TimeOnly), id, t0.Add(delays[id]).Format(time.TimeOnly))
			}
		}
	}
	step(set(t0.Add(15 * time.Minute))) // a jump forward past the first
	if !fired("r10") || fired("r20") {
		t.Fatalf("at 12:15, r10 fired %v (due 12:10), r20 fired %v (due 12:20)", fired("r10"), fired("r20"))
	}
	step(set(t0.Add(3 * time.Hour))) // a jump far past the second
	for id := range delays {
		inst, err := h.Instance(ctx, id)
		if err != nil || inst.Status != engine.StatusCompleted {
			t.Fatalf("%s: %+v, %v; want it completed, its timer fired once", id, inst, err)
		}
		history, err := h.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		timers := 0
		for i, e := range history {
			if e.ID != int64(i+1) {
				t.Fatalf("%s: event %d has id %d; a history's order is its sequence", id, i+1, e.ID)
			}
			if e.Kind == engine.TimerFired {
				timers++
				if due := t0.Add(delays[id]); e.Time.Before(due) {
					t.Errorf("%s: its timer fired at %s, before it was due (%s)", id, e.Time, due)
				}
			}
		}
		if timers != 1 {
			t.Errorf("%s: %d timers fired; want 1", id, timers)
		}
	}
}
