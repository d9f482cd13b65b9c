package host

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestGoroutinesOutsideTheSDKFailTheInstance runs orchestrations that use
// their Context from goroutines started with a go statement or from
// finalizers, wait on something outside the SDK or on nothing, stop their
// goroutine or a branch's, or panic in a branch, three instances each, with
// their activities completing in the order they were scheduled and in the
// reverse. Once nothing is left to run, every instance must have ended, the
// same way whatever the order: Failed with the message that names the
// cause, or (Branches, which uses ctx.Go) Completed.
func TestGoroutinesOutsideTheSDKFailTheInstance(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("host/testdata/guests/plaingo")
	if err != nil {
		t.Fatal(err)
	}
	misuse := func(what string) string {
		return "durabox: " + what + " was called from a goroutine the orchestration started with a go statement (or a finalizer): " +
			"only the orchestration function and the branches it starts with ctx.Go may use its Context and futures, " +
			"since they run one at a time in an order that replays; start the goroutine with ctx.Go, and wait for it with the future ctx.Go returns"
	}
	const deadlock = "orchestration crashed applying event 1: it deadlocked: every goroutine is blocked; an orchestration may wait only on the SDK's futures " +
		"(activities, timers, events, children, branches started with ctx.Go), never on a channel, a mutex or a WaitGroup: a branch runs only while the others wait on futures"
	const goexit = "durabox: the orchestration called runtime.Goexit, which stops its goroutine without returning; return from the function instead"
	tests := []struct {
		orchestration, input string
		// want is the failure's message, or the result when wantResult.
		want       string
		wantResult bool
	}{
		{orchestration: "FanOut", input: `3`, want: misuse("ctx.CallActivity")},
		{orchestration: "Beside", input: `null`, want: misuse("ctx.CallActivity")},
		{orchestration: "Status", input: `null`, want: misuse("ctx.SetCustomStatus")},
		{orchestration: "Later", input: `null`, want: misuse("Future.Get")},
		{orchestration: "Finalizer", input: `null`, want: misuse("ctx.SetCustomStatus")},
		{orchestration: "SelectNothing", input: `null`, want: engine.ErrWaitsOnNothing.Error()},
		{orchestration: "Mutex", input: `null`, want: deadlock},
		{orchestration: "WaitsForBranch", input: `null`, want: deadlock},
		{orchestration: "Collected", input: `null`, want: misuse("ctx.SetCustomStatus")},
		{orchestration: "Goexit", input: `null`, want: goexit},
		{orchestration: "BranchGoexit", input: `null`, want: goexit},
		{orchestration: "BranchPanics", input: `null`, want: "panic in a branch: the branch panicked"},
		{orchestration: "Branches", input: `3`, want: `["0","1","2"]`, wantResult: true},
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, reverse := range []bool{false, true} {
		h := newBareHostWith(t, Options{Clock: func() time.Time { return now }})
		ctx := context.Background()
		if _, err := h.Deploy(ctx, wasm); err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			for i := range 3 {
				if _, err := h.Start(ctx, tt.orchestration, json.RawMessage(tt.input), fmt.Sprint(tt.orchestration, "-", i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		drive(t, h, now, reverse)
		for _, tt := range tests {
			for i := range 3 {
				id := fmt.Sprint(tt.orchestration, "-", i)
				inst, err := h.Instance(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.wantResult && (inst.Status != engine.StatusCompleted || string(inst.Result) != tt.want):
					t.Errorf("completions reversed %v: %s is %s, result %s, failure %+v; want Completed with %s", reverse, id, inst.Status, inst.Result, inst.Failure, tt.want)
				case !tt.wantResult && (inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != tt.want):
					t.Errorf("completions reversed %v: %s is %s, result %s, failure %+v\nwant Failed with %q", reverse, id, inst.Status, inst.Result, inst.Failure, tt.want)
				}
			}
		}
	}
}
