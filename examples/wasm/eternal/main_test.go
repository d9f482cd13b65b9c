package main

import (
	"context"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	var beats []int
	durtest.MockActivity(env, "Beat", func(_ context.Context, round int) (string, error) {
		beats = append(beats, round)
		return "", nil
	})
	inst := env.Start("Heartbeat", State{Rounds: 3, Every: "1h"})
	inst.AdvanceToEnd()
	var got string
	if err := inst.Result(&got); err != nil {
		t.Fatal(err)
	}
	if got != "stopped after 3 rounds" || len(beats) != 3 || beats[2] != 2 {
		t.Fatalf("result %q, beats %v", got, beats)
	}
	// One execution per round, each with a history of its own.
	if inst.Executions() != 3 {
		t.Fatalf("%d executions, want 3", inst.Executions())
	}
	for n := 1; n <= 2; n++ {
		h := inst.ExecutionHistory(n)
		if last := h[len(h)-1]; last.Kind != engine.OrchestrationContinuedAsNew {
			t.Errorf("execution %d ends with %s", n, last.Kind)
		}
	}
	if !env.Now().Equal(durtest.Epoch.Add(2 * time.Hour)) {
		t.Errorf("the clock is at %s after two pauses of an hour", env.Now())
	}
}

func TestHeartbeatRunsUntilStopped(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Heartbeat", State{Every: "1m"})
	env.Advance(time.Hour)
	if inst.Status() != engine.StatusRunning || inst.Executions() != 61 {
		t.Fatalf("%s in execution %d after an hour of one beat a minute", inst.Status(), inst.Executions())
	}
	inst.Cancel("enough")
	if inst.Status() != engine.StatusCanceled {
		t.Fatalf("%s after its cancellation", inst.Status())
	}
}
