package host

import (
	"context"
	"encoding/json"
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

// TestWanted: another attempt is wanted while the execution that
// scheduled the task runs, and not once it has ended, continued as new or
// been purged.
func TestWanted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newBareHostWith(t, Options{})
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := h.st.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"O"}, DeployedAt: now}); err != nil {
		t.Fatal(err)
	}
	run := func(id string, status engine.Status) {
		if err := h.st.CreateInstance(ctx, store.NewInstance{ID: id, Name: "O", ModuleHash: "h1", Input: json.RawMessage(`1`), Now: now}); err != nil {
			t.Fatal(err)
		}
		items, err := h.st.LockNextInstances(ctx, now, time.Minute, 1, nil)
		if err != nil || len(items) != 1 {
			t.Fatalf("lock %s: %v, %v", id, items, err)
		}
		started := items[0].Messages[0].Event
		started.ID, started.Time = 1, now
		c := store.TurnCommit{InstanceID: id, ExecutionID: 1, LockToken: items[0].LockToken, Now: now, NewEvents: []engine.Event{started},
			Status: status, Consumed: []int64{items[0].Messages[0].ID}}
		if status == engine.StatusCompleted {
			c.NewEvents = append(c.NewEvents, engine.Event{ID: 2, Kind: engine.OrchestrationCompleted, Time: now, Result: json.RawMessage(`1`)})
			c.Result = json.RawMessage(`1`)
		}
		if err := h.st.CommitTurn(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	run("running", engine.StatusRunning)
	run("done", engine.StatusCompleted)
	for _, tt := range []struct {
		instance  string
		execution int64
		want      bool
	}{
		{"running", 1, true},
		{"running", 2, false},
		{"done", 1, false},
		{"purged", 1, false},
	} {
		w := &store.ActivityWork{InstanceID: tt.instance, ExecutionID: tt.execution}
		if got := h.wanted(ctx, w); got != tt.want {
			t.Errorf("wanted(%s, execution %d) = %t, want %t", tt.instance, tt.execution, got, tt.want)
		}
	}
}
