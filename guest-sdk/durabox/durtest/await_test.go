package durtest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

// Waiting on state (ctx.Await, ctx.AwaitWithTimeout, durabox.Mutex),
// SelectKeep and cancellation scopes (ctx.WithCancel), run by the kit: the
// same orchestrations the host's end-to-end tests run as wasm
// (host/testdata/guests/await) are written here for the kit, and every
// history is replayed when each test ends.

func init() {
	// AwaitGo waits up to timeout for a branch to see the event "Go".
	durabox.RegisterOrchestration("AwaitGo", func(ctx *durabox.Context, timeout time.Duration) (string, error) {
		ready := false
		ctx.Go(func(ctx *durabox.Context) {
			ready = ctx.WaitEvent("Go").Get(nil) == nil
		})
		ok, err := ctx.AwaitWithTimeout(timeout, func() bool { return ready })
		switch {
		case err != nil:
			return "", err
		case ok:
			return "ready", nil
		}
		return "timed out", nil
	})
	// AwaitReady waits until an activity's future is ready, which no unit
	// waits on: only the step that resolves it can wake the Await.
	durabox.RegisterOrchestration("AwaitReady", func(ctx *durabox.Context, _ any) (string, error) {
		f := ctx.CallActivity("Use", "x")
		if err := ctx.Await(f.Ready); err != nil {
			return "", err
		}
		return durabox.Await[string](f)
	})
	// KeepLoser races two activities with SelectKeep and uses both results.
	durabox.RegisterOrchestration("KeepLoser", func(ctx *durabox.Context, _ any) (string, error) {
		slow, fast := ctx.CallActivity("Slow", "s"), ctx.CallActivity("Fast", "f")
		first := []string{"slow", "fast"}[ctx.SelectKeep(slow, fast)]
		late, err := durabox.Await[string](slow)
		if err != nil {
			return "", err
		}
		return first + " won; the slow one still said " + late, nil
	})
	// Scope cancels a timer, an activity and a wait at once, then starts a
	// timer in the cancelled scope.
	durabox.RegisterOrchestration("Scope", func(ctx *durabox.Context, _ any) (string, error) {
		scope, cancel := ctx.WithCancel()
		ops := []*durabox.Future{scope.NewTimer(time.Hour), scope.CallActivity("Slow", "s"), scope.WaitEvent("Never")}
		if err := ctx.Sleep(time.Minute); err != nil {
			return "", err
		}
		cancel()
		var out []string
		for _, f := range append(ops, scope.NewTimer(time.Second)) {
			out = append(out, fmt.Sprint(errors.Is(f.Get(nil), durabox.ErrCanceled)))
		}
		return strings.Join(out, " "), scope.Await(func() bool { return true })
	})
	// Turns runs three branches that take a durabox.Mutex in turn around
	// an activity, and fails if two ever hold it at once.
	durabox.RegisterOrchestration("Turns", func(ctx *durabox.Context, names []string) ([]string, error) {
		var m durabox.Mutex
		var order []string
		holders := 0
		var done []*durabox.Future
		for _, name := range names {
			done = append(done, ctx.Go(func(ctx *durabox.Context) {
				if m.Lock(ctx) != nil {
					return
				}
				defer m.Unlock()
				if holders++; holders > 1 {
					panic("two branches hold the lock")
				}
				order = append(order, name)
				ctx.CallActivity("Use", name).Get(nil)
				holders--
			}))
		}
		_, err := durabox.All[any](done...)
		return order, err
	})
	// TwoConditions waits for the events A and B, seen by branches, and
	// calls an activity after each; in the order of its input.
	durabox.RegisterOrchestration("TwoConditions", func(ctx *durabox.Context, order []string) (string, error) {
		seen := map[string]bool{}
		for _, name := range []string{"A", "B"} {
			ctx.Go(func(ctx *durabox.Context) {
				seen[name] = ctx.WaitEvent(name).Get(nil) == nil
			})
		}
		for _, name := range order {
			if err := ctx.Await(func() bool { return seen[name] }); err != nil {
				return "", err
			}
			if _, err := durabox.Call[string](ctx, "Use", name); err != nil {
				return "", err
			}
		}
		return "both", nil
	})
}

// kinds lists a history as kind(name) words.
func kinds(events []engine.Event) []string {
	var out []string
	for _, e := range events {
		s := string(e.Kind)
		if e.Name != "" {
			s += "(" + e.Name + ")"
		}
		out = append(out, s)
	}
	return out
}

func expectKinds(t *testing.T, inst *durtest.Instance, want ...string) {
	t.Helper()
	if got := kinds(inst.History()); !slices.Equal(got, want) {
		t.Fatalf("history of %s:\n  %s\nwant:\n  %s", inst.ID(), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestAwaitWithTimeout(t *testing.T) {
	t.Parallel()
	t.Run("the condition holds first", func(t *testing.T) {
		t.Parallel()
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("AwaitGo", time.Hour)
		env.Advance(time.Minute)
		inst.Raise("Go", nil)
		expectResult(t, inst, `"ready"`)
		expectKinds(t, inst, "OrchestrationStarted(AwaitGo)", "TimerCreated", "ExternalSubscribed(Go)", "ExternalEvent(Go)", "TimerCancelled", "OrchestrationCompleted")
	})
	t.Run("the timeout first", func(t *testing.T) {
		t.Parallel()
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("AwaitGo", time.Hour)
		env.Advance(time.Hour)
		expectResult(t, inst, `"timed out"`)
		expectKinds(t, inst, "OrchestrationStarted(AwaitGo)", "TimerCreated", "ExternalSubscribed(Go)", "TimerFired", "OrchestrationCompleted")
	})
	t.Run("the instance is cancelled", func(t *testing.T) {
		t.Parallel()
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("AwaitGo", time.Hour)
		inst.Cancel("enough")
		expectFailure(t, inst, engine.StatusCanceled, "durabox: the instance was cancelled: enough")
	})
}

// TestAwaitChecksAfterEveryStep: a condition no unit's running changes
// (a future's Ready) is checked again after the step that resolves it.
func TestAwaitChecksAfterEveryStep(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Use", func(_ context.Context, in string) (string, error) { return "used " + in, nil })
	env.ActivityTakes("Use", time.Minute)
	inst := env.Start("AwaitReady", nil)
	inst.AdvanceToEnd()
	expectResult(t, inst, `"used x"`)
}

func TestSelectKeepLetsTheLoserFinish(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Slow", func(_ context.Context, in string) (string, error) { return "slow " + in, nil })
	durtest.MockActivity(env, "Fast", func(_ context.Context, in string) (string, error) { return "fast " + in, nil })
	env.ActivityTakes("Slow", time.Minute)
	env.ActivityTakes("Fast", time.Second)
	inst := env.Start("KeepLoser", nil)
	inst.AdvanceToEnd()
	expectResult(t, inst, `"fast won; the slow one still said slow s"`)
	expectKinds(t, inst, "OrchestrationStarted(KeepLoser)", "ActivityScheduled(Slow)", "ActivityScheduled(Fast)", "ActivityCompleted", "ActivityCompleted", "OrchestrationCompleted")
}

func TestCancellationScope(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Slow", func(_ context.Context, in string) (string, error) { return in, nil })
	env.ActivityTakes("Slow", time.Hour)
	inst := env.Start("Scope", nil)
	inst.AdvanceToEnd()
	// The three operations, the timer started after the cancel (never
	// scheduled), and an Await in the cancelled scope.
	expectFailure(t, inst, engine.StatusFailed, "durabox: the operation was cancelled")
	expectKinds(t, inst, "OrchestrationStarted(Scope)", "TimerCreated", "ActivityScheduled(Slow)", "ExternalSubscribed(Never)", "TimerCreated", "TimerFired",
		"TimerCancelled", "ActivityCancelRequested", "ExternalSubscribedCancelled", "OrchestrationFailed")
	h := inst.History()
	for i, target := range []int64{2, 3, 4} {
		if got := h[6+i].ScheduleID; got != target {
			t.Errorf("cancel %d names event %d, want %d (cancelled in the order started)", i, got, target)
		}
	}
}

func TestMutexGrantsInOrder(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Use", func(_ context.Context, in string) (string, error) { return in, nil })
	env.ActivityTakes("Use", time.Minute)
	start := env.Now()
	inst := env.Start("Turns", []string{"a", "b", "c"})
	inst.AdvanceToEnd()
	expectResult(t, inst, `["a","b","c"]`)
	if got := env.Now().Sub(start); got != 3*time.Minute {
		t.Fatalf("the three uses took %s, want 3m, one after another", got)
	}
}

// TestAwaitReplaysAndCatchesAChangedOrder: a history made by waiting for A
// then B replays; the same history under code that waits for B first is
// nondeterminism, caught where the code no longer calls what history has.
func TestAwaitReplaysAndCatchesAChangedOrder(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Use", func(_ context.Context, in string) (string, error) { return in, nil })
	inst := env.Start("TwoConditions", []string{"A", "B"})
	inst.Raise("A", nil)
	inst.Raise("B", nil)
	expectResult(t, inst, `"both"`)
	history := inst.History()
	if err := durtest.Replay(history); err != nil {
		t.Fatalf("the history does not replay: %v", err)
	}
	swapped := slices.Clone(history)
	swapped[0].Input = []byte(`["B","A"]`)
	var nd *engine.NondeterminismError
	want := `nondeterminism at event 5: history has ActivityScheduled("Use", "A"), the orchestration emitted nothing`
	if err := durtest.Replay(swapped); !errors.As(err, &nd) || !strings.Contains(err.Error(), want) {
		t.Fatalf("replay with B awaited first: %v\nwant a nondeterminism error containing %q", err, want)
	}
}
