package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

// held is when a worker held the lock: from its Work's call to its result.
type held struct {
	worker    string
	from, end time.Time
}

// holds returns when each worker did its Work, in the order they began.
func holds(t *testing.T, workers []*durtest.Instance) []held {
	t.Helper()
	var out []held
	for _, w := range workers {
		h := held{worker: w.ID()}
		for _, e := range w.History() {
			switch {
			case e.Kind == engine.ActivityScheduled && e.Name == "Work":
				h.from = e.Time
			case e.Kind == engine.ActivityCompleted && !h.from.IsZero() && h.end.IsZero():
				h.end = e.Time
			}
		}
		if h.from.IsZero() || h.end.IsZero() {
			t.Fatalf("worker %s never did its work: %v", w.ID(), w.History())
		}
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b held) int { return a.from.Compare(b.from) })
	return out
}

// TestWorkersTakeTheLockInTurn: ten workers ask at once; each does its
// minute of work alone, in the order they asked, and Lock continues as new
// after eight.
func TestWorkersTakeTheLockInTurn(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	env.ActivityTakes("Work", time.Minute)
	lock := env.Start("Lock", 0, "lock")
	var workers []*durtest.Instance
	for i := range 10 {
		workers = append(workers, env.Start("Worker", Job{Lock: "lock", Work: fmt.Sprint("job ", i)}, fmt.Sprint("w", i)))
	}
	start := env.Now()
	env.Advance(time.Hour)
	for i, w := range workers {
		var got string
		if err := w.Result(&got); err != nil || got != fmt.Sprint("did job ", i) {
			t.Fatalf("worker %s: %q, %v", w.ID(), got, err)
		}
	}
	hs := holds(t, workers)
	for i, h := range hs {
		if want := fmt.Sprint("w", i); h.worker != want {
			t.Fatalf("worker %s held the lock %dth, want %s (the order they asked)", h.worker, i+1, want)
		}
		if i > 0 && h.from.Before(hs[i-1].end) {
			t.Fatalf("%s took the lock at %s, while %s held it until %s", h.worker, h.from, hs[i-1].worker, hs[i-1].end)
		}
	}
	if got := hs[len(hs)-1].end.Sub(start); got != 10*time.Minute {
		t.Errorf("ten minutes of work took %s", got)
	}
	if lock.Executions() != 2 || lock.CustomStatus() != "held by w9" {
		t.Errorf("Lock is in execution %d with custom status %q, want 2 and held by w9", lock.Executions(), lock.CustomStatus())
	}
}
