package host

import (
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestNextAttempt: a failed attempt is retried as its call's policy says,
// counting the failures before it; a success, a final failure (poison, or
// an attempt stopped) and a call without a policy are not.
func TestNextAttempt(t *testing.T) {
	t.Parallel()
	policy := &engine.RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 1000}
	failed := engine.Event{Kind: engine.ActivityFailed, ScheduleID: 2, Failure: &engine.Failure{Message: "busy"}}
	tests := []struct {
		name      string
		policy    *engine.RetryPolicy
		failures  int
		o         outcome
		wantWait  time.Duration
		wantRetry bool
	}{
		{"the first failure", policy, 0, outcome{result: failed}, time.Second, true},
		{"the second failure", policy, 1, outcome{result: failed}, 2 * time.Second, true},
		{"the last failure", policy, 2, outcome{result: failed}, 0, false},
		{"a success", policy, 0, outcome{result: engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2}}, 0, false},
		{"a final failure", policy, 0, outcome{result: failed, final: true}, 0, false},
		{"no policy", nil, 0, outcome{result: failed}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := &store.ActivityWork{Task: engine.ActivityTask{ScheduleID: 2, Name: "Charge", Retry: tt.policy}, Failures: tt.failures, Attempt: 1}
			wait, retry := nextAttempt(w, tt.o)
			if wait != tt.wantWait || retry != tt.wantRetry {
				t.Fatalf("nextAttempt = %s, %t; want %s, %t", wait, retry, tt.wantWait, tt.wantRetry)
			}
		})
	}
}
