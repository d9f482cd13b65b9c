package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func TestRetryPolicyNext(t *testing.T) {
	t.Parallel()
	policy := &RetryPolicy{MaximumAttempts: 5, InitialIntervalMs: 100, BackoffThousandths: 3000, MaximumIntervalMs: 2000, NonRetryable: []string{"Declined"}}
	tests := []struct {
		name      string
		policy    *RetryPolicy
		attempt   int
		failure   *Failure
		wantWait  time.Duration
		wantRetry bool
	}{
		{"no policy", nil, 1, &Failure{Message: "no"}, 0, false},
		{"the zero policy: one attempt", &RetryPolicy{}, 1, &Failure{Message: "no"}, 0, false},
		{"after the first", policy, 1, &Failure{Message: "no"}, 100 * time.Millisecond, true},
		{"after the second", policy, 2, &Failure{Message: "no"}, 300 * time.Millisecond, true},
		{"after the third", policy, 3, &Failure{Message: "no"}, 900 * time.Millisecond, true},
		{"capped by the maximum", policy, 4, &Failure{Message: "no"}, 2 * time.Second, true},
		{"after the last", policy, 5, &Failure{Message: "no"}, 0, false},
		{"a non-retryable type", policy, 1, &Failure{Message: "no", Type: "Declined"}, 0, false},
		{"another type", policy, 1, &Failure{Message: "no", Type: "Busy"}, 100 * time.Millisecond, true},
		{"the default coefficient doubles", &RetryPolicy{MaximumAttempts: 4, InitialIntervalMs: 1000}, 3, &Failure{}, 4 * time.Second, true},
		{"no interval: at once", &RetryPolicy{MaximumAttempts: 4}, 2, &Failure{}, 0, true},
		{"no cap stops at a year", &RetryPolicy{MaximumAttempts: 1000, InitialIntervalMs: 1000}, 999, &Failure{}, abi.MaxRetryInterval, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, retry := tt.policy.Next(tt.attempt, tt.failure)
			if wait != tt.wantWait || retry != tt.wantRetry {
				t.Fatalf("Next(%d) = %s, %t; want %s, %t", tt.attempt, wait, retry, tt.wantWait, tt.wantRetry)
			}
		})
	}
}

// TestAttemptsReachTheGuest pins that the attempts an activity's outcome
// records reach the guest in its ResolveActivity job, live and replayed,
// and that Event.String names them.
func TestAttemptsReachTheGuest(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{withRetry(activity("Charge", `5`), &abi.RetryPolicy{MaximumAttempts: 3})}
		}
		return nil
	}
	g := newGuest(handle)
	res, err := newExecution(g).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(1)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	failed := Event{Kind: ActivityFailed, ScheduleID: 2, Failure: &Failure{Message: "card declined", Type: "Declined"}, Attempts: 3}
	if got, want := failed.String(), `ActivityFailed(event 2, "card declined", after 3 attempts)`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	g2 := newGuest(handle)
	if _, err := newExecution(g2).Turn(TurnInput{History: res.NewEvents, Messages: []Event{failed}, Now: at(2)}); err != nil {
		t.Fatal(err)
	}
	last := g2.activations[len(g2.activations)-1].Jobs[0]
	if last.Kind != abi.JobResolveActivity || last.Attempts != 3 || last.Failure == nil || last.Failure.Type != "Declined" {
		t.Fatalf("job %+v, want ResolveActivity with 3 attempts and the failure's type", last)
	}
	b, err := json.Marshal(failed)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.Attempts != 3 || back.Failure.Type != "Declined" {
		t.Fatalf("round trip of %s: %+v, %v", b, back, err)
	}
}

// TestABadRetryPolicyFailsTheInstance pins that a policy the host could not
// follow fails the instance, saying why, rather than reach history.
func TestABadRetryPolicyFailsTheInstance(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		return []abi.Command{withRetry(activity("Charge", "null"), &abi.RetryPolicy{MaximumAttempts: 3, BackoffThousandths: 999})}
	}
	res, err := newExecution(newGuest(handle)).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(1)})
	if err != nil {
		t.Fatal(err)
	}
	const want = "engine: the orchestration's command 1 is refused: retry policy: the backoff coefficient is 0.999; it must be at least 1 (or 0 for the default, 2)"
	if res.Status != StatusFailed || res.Failure == nil || res.Failure.Message != want || len(res.Activities) != 0 {
		t.Fatalf("status %s, failure %+v, activities %v; want Failed with %q and no activity", res.Status, res.Failure, res.Activities, want)
	}
}
