package main

import (
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func result(t *testing.T, inst *durtest.Instance) string {
	t.Helper()
	var got string
	if err := inst.Result(&got); err != nil {
		t.Fatal(err)
	}
	return got
}

func kinds(inst *durtest.Instance) []engine.EventKind {
	var out []engine.EventKind
	for _, e := range inst.History() {
		out = append(out, e.Kind)
	}
	return out
}

func TestApproval(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		decision Decision
		want     string
	}{
		{"approved", Decision{Approved: true, By: "ada"}, "laptop approved by ada"},
		{"rejected", Decision{By: "grace"}, "laptop rejected by grace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			inst := env.Start("Approval", Request{Item: "laptop", Timeout: "24h"})
			if s := inst.CustomStatus(); s != "waiting for a decision on laptop" {
				t.Fatalf("custom status %q", s)
			}
			env.Advance(3 * time.Hour)
			var decided *Decision
			if err := inst.Query("Decision", nil, &decided); err != nil || decided != nil {
				t.Fatalf("query Decision while waiting: %+v, %v; want null", decided, err)
			}
			inst.Raise("Approval", tt.decision)
			if got := result(t, inst); got != tt.want {
				t.Fatalf("result %q, want %q", got, tt.want)
			}
			if err := inst.Query("Decision", nil, &decided); err != nil || decided == nil || *decided != tt.decision {
				t.Fatalf("query Decision once decided: %+v, %v; want %+v", decided, err, tt.decision)
			}
			if !slices.Contains(kinds(inst), engine.TimerCancelled) {
				t.Errorf("the timeout was not cancelled: %v", kinds(inst))
			}
		})
	}
}

func TestApprovalExpires(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Approval", Request{Item: "chair", Timeout: "24h"})
	env.Advance(24 * time.Hour)
	if got, want := result(t, inst), "chair: no decision in 24h, request expired"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	if !slices.Contains(kinds(inst), engine.ExternalSubscribedCancelled) {
		t.Errorf("the wait was not cancelled: %v", kinds(inst))
	}
	// A decision after the timeout finds no wait: it is dropped.
	inst.Raise("Approval", Decision{Approved: true, By: "ada"})
	if d := inst.Dropped(); len(d) != 1 {
		t.Fatalf("dropped %+v", d)
	}
}

// TestApprovalDropsADecisionRaisedTooEarly: the Approval event is
// positional, so one raised while the request's notification is still
// being sent (before the wait) is dropped, and the request expires.
func TestApprovalDropsADecisionRaisedTooEarly(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	env.ActivityTakes("Notify", time.Minute)
	inst := env.Start("Approval", Request{Item: "desk", Timeout: "1h"})
	env.After(30*time.Second, func() { inst.Raise("Approval", Decision{Approved: true, By: "ada"}) })
	inst.AdvanceToEnd()
	if got, want := result(t, inst), "desk: no decision in 1h, request expired"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	if d := inst.Dropped(); len(d) != 1 || d[0].Message.Kind != engine.ExternalEvent {
		t.Fatalf("dropped %+v", d)
	}
}
