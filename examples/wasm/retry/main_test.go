package main

import (
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func TestRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input RetryInput
		// want is the result, or the failure's message when it fails.
		want   string
		status engine.Status
		// waits are the timers between attempts.
		waits []time.Duration
	}{
		{"first time", RetryInput{}, "succeeded on attempt 1", engine.StatusCompleted, nil},
		{"after two failures", RetryInput{Failures: 2, Delay: "30s"}, "succeeded on attempt 3", engine.StatusCompleted, []time.Duration{30 * time.Second, 30 * time.Second}},
		{"gives up", RetryInput{Attempts: 2, Failures: 5}, "all 2 attempts failed", engine.StatusFailed, []time.Duration{time.Second}},
		{"a bad delay", RetryInput{Delay: "soon"}, `delay "soon" is not a duration such as 1s or 250ms`, engine.StatusFailed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			inst := env.Start("Retry", tt.input)
			inst.AdvanceToEnd()
			var got string
			err := inst.Result(&got)
			if f := inst.Failure(); f != nil {
				got = f.Message
			} else if err != nil {
				t.Fatal(err)
			}
			if inst.Status() != tt.status || got != tt.want {
				t.Fatalf("%s %q, want %s %q", inst.Status(), got, tt.status, tt.want)
			}
			var waits []time.Duration
			for _, e := range inst.History() {
				if e.Kind == engine.TimerCreated {
					waits = append(waits, e.FireAt.Sub(e.Time))
				}
			}
			if !slices.Equal(waits, tt.waits) {
				t.Fatalf("waits %v, want %v", waits, tt.waits)
			}
		})
	}
}

// TestRetryWaitsOnItsTimer: nothing happens between attempts until the
// clock reaches the delay.
func TestRetryWaitsOnItsTimer(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Retry", RetryInput{Failures: 1, Delay: "1m"})
	env.Advance(59 * time.Second)
	if h := inst.History(); inst.Status() != engine.StatusRunning || h[len(h)-1].Kind != engine.TimerCreated {
		t.Fatalf("%s, history ends with %s", inst.Status(), h[len(h)-1].Kind)
	}
	env.Advance(time.Second)
	if err := inst.Result(nil); err != nil {
		t.Fatal(err)
	}
}
