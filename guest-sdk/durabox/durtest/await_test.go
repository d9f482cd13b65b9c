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
// SelectKeep and cancellation scopes (ctx.WithCancel), run by the kit;
// every history is replayed when each test ends. The host's end-to-end
// tests run the same features as wasm (host/await_test.go), and
// internal/kitparity checks that the kit and a host record them alike.

func init() {
	// AwaitTicks waits up to timeout for two events Tick, counted by a
	// branch.
	durabox.RegisterOrchestration("AwaitTicks", func(ctx *durabox.Context, timeout time.Duration) (string, error) {
		ticks := 0
		ctx.Go(func(ctx *durabox.Context) {
			for ctx.WaitEventPersistent("Tick").Get(nil) == nil {
				ticks++
			}
		})
		ok, err := ctx.AwaitWithTimeout(timeout, func() bool { return ticks >= 2 })
		return fmt.Sprintf("%v after %d ticks", ok, ticks), err
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
		return strings.Join(out, " ") + "; then Await: " + fmt.Sprint(scope.Await(func() bool { return true })), nil
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

// TestAwaitWithTimeout: the condition (two ticks) holds before the timer
// fires, though the first tick did not make it hold, and the timer is
// cancelled; or the timer fires after one tick; or the instance is
// cancelled while it waits.
func TestAwaitWithTimeout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		drive   func(env *durtest.Env, inst *durtest.Instance)
		want    string
		history []string
	}{
		{
			name: "the condition holds first",
			drive: func(env *durtest.Env, inst *durtest.Instance) {
				inst.RaisePersistent("Tick", nil)
				env.Advance(time.Minute)
				inst.RaisePersistent("Tick", nil)
			},
			want: `"true after 2 ticks"`,
			history: []string{`ExternalEventPersistent("Tick", null)`, `ExternalSubscribedPersistent("Tick")`, `ExternalEventPersistent("Tick", null)`, `ExternalSubscribedPersistent("Tick")`,
				"TimerCancelled(event 2)", `OrchestrationCompleted("true after 2 ticks")`},
		},
		{
			name: "the timeout first",
			drive: func(env *durtest.Env, inst *durtest.Instance) {
				inst.RaisePersistent("Tick", nil)
				env.Advance(time.Hour)
			},
			want:    `"false after 1 ticks"`,
			history: []string{`ExternalEventPersistent("Tick", null)`, `ExternalSubscribedPersistent("Tick")`, "TimerFired(event 2)", `OrchestrationCompleted("false after 1 ticks")`},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := durtest.New(t, durtest.Options{})
			inst := env.Start("AwaitTicks", time.Hour)
			tt.drive(env, inst)
			expectResult(t, inst, tt.want)
			start := []string{`OrchestrationStarted("AwaitTicks", 3600000000000)`, "TimerCreated(2025-01-01T01:00:00Z)", `ExternalSubscribedPersistent("Tick")`}
			expectHistory(t, inst, append(start, tt.history...)...)
		})
	}
	t.Run("the instance is cancelled", func(t *testing.T) {
		t.Parallel()
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("AwaitTicks", time.Hour)
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
	expectHistory(t, inst, `OrchestrationStarted("KeepLoser", null)`, `ActivityScheduled("Slow", "s")`, `ActivityScheduled("Fast", "f")`,
		`ActivityCompleted(event 3, "fast f")`, `ActivityCompleted(event 2, "slow s")`, `OrchestrationCompleted("fast won; the slow one still said slow s")`)
}

func TestCancellationScope(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Slow", func(_ context.Context, in string) (string, error) { return in, nil })
	env.ActivityTakes("Slow", time.Hour)
	inst := env.Start("Scope", nil)
	inst.AdvanceToEnd()
	// The three operations, cancelled in the order they started; the
	// timer started after the cancel, never scheduled; an Await in the
	// cancelled scope.
	expectHistory(t, inst, `OrchestrationStarted("Scope", null)`, "TimerCreated(2025-01-01T01:00:00Z)", `ActivityScheduled("Slow", "s")`, `ExternalSubscribed("Never")`,
		"TimerCreated(2025-01-01T00:01:00Z)", "TimerFired(event 5)", "TimerCancelled(event 2)", "ActivityCancelRequested(event 3)", "ExternalSubscribedCancelled(event 4)",
		`OrchestrationCompleted("true true true true; then Await: durabox: the operation was cancelled")`)
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
