package host_test

import (
	"context"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/store"
)

// retriesGuest calls activities with retry policies the host follows.
const retriesGuest = "host/testdata/guests/retries"

// frozenClock is a host clock that stands still until the test moves it.
type frozenClock struct{ nanos atomic.Int64 }

func newFrozenClock(at time.Time) *frozenClock {
	c := &frozenClock{}
	c.set(at)
	return c
}

func (c *frozenClock) now() time.Time   { return time.Unix(0, c.nanos.Load()).UTC() }
func (c *frozenClock) set(at time.Time) { c.nanos.Store(at.UnixNano()) }

// retryHost runs a host on clock with the retries guest deployed.
func retryHost(t *testing.T, clock *frozenClock) *testHost {
	t.Helper()
	h := startHost(t, host.Options{Clock: clock.now})
	h.deploy(t, retriesGuest)
	return h
}

// awaitRetry waits until the store's next visible work, seen at now, is a
// task due at want: an attempt failed, and the task waits for its retry.
func (h *testHost) awaitRetry(t *testing.T, now, want time.Time) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		next, ok, err := h.st.NextVisibleAt(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		if ok && next.Equal(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, the next visible work is at %s (%t); want a retry due at %s", next, ok, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRetryPolicyExhausted: a call whose attempts all fail is retried by
// the host after the policy's waits (1h, then 2h, on the host's clock, and
// not a moment before), and its history holds one ActivityScheduled, with
// the policy, and one ActivityFailed that names the attempts and the last
// failure; the history replays.
func TestRetryPolicyExhausted(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := newFrozenClock(t0)
	h := retryHost(t, clock)
	id := h.start(t, "Hourly", `99`)

	h.awaitRetry(t, t0, t0.Add(time.Hour))
	if ws, err := h.st.LockNextActivities(context.Background(), t0.Add(time.Hour-time.Millisecond), time.Minute, 10, nil); err != nil || len(ws) != 0 {
		t.Fatalf("a millisecond before the retry is due, the store hands out %+v, %v; want nothing", ws, err)
	}
	expectShape(t, h.history(t, id), "OrchestrationStarted(Hourly)", "ActivityScheduled(Flaky)")
	if q, err := h.Queue(context.Background()); err != nil || q.Retrying != 1 || q.Activities != 0 {
		t.Fatalf("queue %+v, %v; want the task retrying, none waiting", q, err)
	}
	clock.set(t0.Add(time.Hour))
	h.awaitRetry(t, t0.Add(time.Hour), t0.Add(3*time.Hour))
	expectShape(t, h.history(t, id), "OrchestrationStarted(Hourly)", "ActivityScheduled(Flaky)")
	clock.set(t0.Add(3 * time.Hour))

	events := h.finish(t, id, `"failed after 3 attempts (Busy): busy on attempt 3"`)
	expectShape(t, events, "OrchestrationStarted(Hourly)", "ActivityScheduled(Flaky)", "ActivityFailed", "OrchestrationCompleted")
	wantPolicy := &engine.RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 3_600_000, BackoffThousandths: 2000, NonRetryable: []string{"Declined"}}
	if got := events[1].Retry; !reflect.DeepEqual(got, wantPolicy) {
		t.Errorf("ActivityScheduled's policy %+v, want %+v", got, wantPolicy)
	}
	failed := events[2]
	wantFailure := &engine.Failure{Message: "busy on attempt 3", Type: "Busy"}
	if failed.Attempts != 3 || !reflect.DeepEqual(failed.Failure, wantFailure) || !failed.Time.Equal(t0.Add(3*time.Hour)) {
		t.Errorf("ActivityFailed %s (attempts %d, failure %+v, at %s); want 3 attempts, %+v, at %s", failed.String(), failed.Attempts, failed.Failure, failed.Time, wantFailure, t0.Add(3*time.Hour))
	}
	h.replays(t, id)
}

// TestRetryPolicyOutcomes: what a policy makes of a call's attempts, each
// recorded as one outcome with the attempts: a success on a later attempt,
// a non-retryable error type that ends the call at once, the module's
// default policy, an attempt past its deadline retried like any failure.
func TestRetryPolicyOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, orchestration, input string
		want                       string
		outcome                    engine.EventKind
		attempts                   int64
		policy                     *engine.RetryPolicy
	}{
		{"a success on the second attempt", "AtOnce", `2`, `"done on attempt 2"`, engine.ActivityCompleted, 2, &engine.RetryPolicy{MaximumAttempts: 3}},
		{"a non-retryable type", "Decline", `null`, `"failed after 1 attempts (Declined): the card was declined"`, engine.ActivityFailed, 1,
			&engine.RetryPolicy{MaximumAttempts: 5, NonRetryable: []string{"Declined"}}},
		{"the module's default, succeeding", "ByDefault", `3`, `"done on attempt 3"`, engine.ActivityCompleted, 3, &engine.RetryPolicy{MaximumAttempts: 3}},
		{"the module's default, exhausted", "ByDefault", `5`, `"failed after 3 attempts (Busy): busy on attempt 3"`, engine.ActivityFailed, 3, &engine.RetryPolicy{MaximumAttempts: 3}},
		{"a deadline", "SlowFirst", `null`, `"done on attempt 2"`, engine.ActivityCompleted, 2, &engine.RetryPolicy{MaximumAttempts: 2}},
	}
	clock := newFrozenClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	h := retryHost(t, clock)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := h.start(t, tt.orchestration, tt.input)
			events := h.finish(t, id, tt.want)
			expectShape(t, events, "OrchestrationStarted("+tt.orchestration+")", "ActivityScheduled("+events[1].Name+")", string(tt.outcome), "OrchestrationCompleted")
			if got := events[1].Retry; !reflect.DeepEqual(got, tt.policy) {
				t.Errorf("ActivityScheduled's policy %+v, want %+v", got, tt.policy)
			}
			if got := events[2]; got.Attempts != tt.attempts {
				t.Errorf("%s; want %d attempts", got.String(), tt.attempts)
			}
			h.replays(t, id)
		})
	}
}

// TestNoRetryForACancelledCall: a call cancelled while it waits for its
// next attempt is dropped, though its instance runs on.
func TestNoRetryForACancelledCall(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := newFrozenClock(t0)
	h := retryHost(t, clock)
	id := h.start(t, "Impatient", `null`)
	h.awaitQueue(t, "the first attempt failed, the task waits for its retry", func(q store.QueueStats) bool { return q.Retrying == 1 })
	clock.set(t0.Add(30 * time.Minute))
	h.until(t, id, "the call cancelled", func(events []engine.Event) bool {
		return slices.ContainsFunc(events, func(e engine.Event) bool { return e.Kind == engine.ActivityCancelRequested })
	})
	h.awaitQueue(t, "no task left", func(q store.QueueStats) bool { return q.Retrying == 0 && q.Activities == 0 && q.Running == 0 })
	if inst, err := h.Instance(context.Background(), id); err != nil || inst.Status != engine.StatusRunning {
		t.Fatalf("instance %s, %v; want it running, asleep", inst.Status, err)
	}
	clock.set(t0.Add(90 * time.Minute))
	h.finish(t, id, `"gave up waiting"`)
}

// awaitQueue waits, a minute at most, until the host's queue is as done
// says, which what describes.
func (h *testHost) awaitQueue(t *testing.T, what string, done func(store.QueueStats) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		q, err := h.Queue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if done(q) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, the queue is %+v; want %s", q, what)
		}
	}
}
