// Command kitparity is a module of scenarios that its test runs twice,
// natively with the test kit (guest-sdk/durabox/durtest) and as wasm on a
// real host, to show that both record the same histories: timers, events
// positional and persistent, selects and their cancellations, the
// cancellation of an instance and its child, children, continue-as-new,
// retries and events raised between instances.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Timers", Timers)
	durabox.RegisterOrchestration("Events", Events)
	durabox.RegisterOrchestration("Selects", Selects)
	durabox.RegisterOrchestration("Guard", Guard)
	durabox.RegisterOrchestration("Waiter", Waiter)
	durabox.RegisterOrchestration("Family", Family)
	durabox.RegisterOrchestration("Greet", Greet)
	durabox.RegisterOrchestration("Rounds", Rounds)
	durabox.RegisterOrchestration("Retries", Retries)
	durabox.RegisterOrchestration("Conditions", Conditions)
	durabox.RegisterOrchestration("Signals", Signals)
	durabox.RegisterOrchestration("Listener", Listener)
	durabox.RegisterActivity("Echo", Echo)
	durabox.RegisterActivity("Flaky", Flaky)
	durabox.RegisterActivity("Down", Down)
}

// Timers sleeps, then waits for two timers at once.
func Timers(ctx *durabox.Context, _ any) (string, error) {
	if err := ctx.Sleep(30 * time.Millisecond); err != nil {
		return "", err
	}
	if _, err := durabox.All[any](ctx.NewTimer(20*time.Millisecond), ctx.NewTimer(40*time.Millisecond)); err != nil {
		return "", err
	}
	ctx.SetCustomStatus("slept")
	return "slept", nil
}

// Events waits for the positional event A, then the persistent P (raised
// before its wait), then the positional B (raised once before its wait,
// which is dropped, and once while it waits).
func Events(ctx *durabox.Context, _ any) ([]string, error) {
	var out []string
	for _, f := range []func() *durabox.Future{
		func() *durabox.Future { return ctx.WaitEvent("A") },
		func() *durabox.Future { return ctx.WaitEventPersistent("P") },
		func() *durabox.Future { return ctx.WaitEvent("B") },
	} {
		v, err := durabox.Await[string](f())
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Selects races an activity against a long timer (the activity wins), a
// wait nobody answers against a short timer (the timer wins), and a wait
// that is answered against a long timer (the wait wins).
func Selects(ctx *durabox.Context, _ any) ([]string, error) {
	var out []string
	work := ctx.CallActivity("Echo", "work")
	if ctx.Select(work, ctx.NewTimer(time.Hour)) == 0 {
		out = append(out, "activity")
	}
	if ctx.Select(ctx.WaitEvent("Never"), ctx.NewTimer(20*time.Millisecond)) == 1 {
		out = append(out, "timer")
	}
	answer := ctx.WaitEvent("Go")
	if ctx.Select(answer, ctx.NewTimer(time.Hour)) == 0 {
		v, err := durabox.Await[string](answer)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Guard waits for a child and an event until it is cancelled, then cleans
// up and ends cancelled.
func Guard(ctx *durabox.Context, _ any) (string, error) {
	child := ctx.CallChild("Waiter", nil)
	wait := ctx.WaitEvent("Never")
	if err := child.Get(nil); !errors.Is(err, durabox.ErrCanceled) || !errors.Is(wait.Get(nil), durabox.ErrCanceled) {
		return "", fmt.Errorf("not cancelled: %v", err)
	}
	if _, err := durabox.Call[string](ctx, "Echo", "cleanup"); err != nil {
		return "", err
	}
	return "", ctx.Err()
}

// Conditions waits on state: an AwaitWithTimeout whose condition (the
// event Ready, seen by a branch) wins, one whose short timer wins; then a
// SelectKeep of an activity against a long timer of a scope (the activity
// wins, and the timer is kept), and the scope cancelled with that timer
// and a wait open in it.
func Conditions(ctx *durabox.Context, _ any) ([]string, error) {
	ready := false
	ctx.Go(func(ctx *durabox.Context) { ready = ctx.WaitEvent("Ready").Get(nil) == nil })
	first, err := ctx.AwaitWithTimeout(time.Hour, func() bool { return ready })
	if err != nil {
		return nil, err
	}
	second, err := ctx.AwaitWithTimeout(20*time.Millisecond, func() bool { return false })
	if err != nil {
		return nil, err
	}
	scope, cancel := ctx.WithCancel()
	long := scope.NewTimer(time.Hour)
	won := ctx.SelectKeep(ctx.CallActivity("Echo", "work"), long)
	wait := scope.WaitEvent("Never")
	cancel()
	return []string{fmt.Sprint(first, second, won), fmt.Sprint(errors.Is(long.Get(nil), durabox.ErrCanceled), errors.Is(wait.Get(nil), durabox.ErrCanceled))}, nil
}

// Waiter waits for an event nobody raises.
func Waiter(ctx *durabox.Context, _ any) (string, error) {
	return durabox.Await[string](ctx.WaitEvent("Never"))
}

// Family greets each name through a child, one after the other, starts a
// detached child, and calls a child nobody registers.
func Family(ctx *durabox.Context, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		greeting, err := durabox.Child[string](ctx, "Greet", n)
		if err != nil {
			greeting = err.Error()
		}
		out = append(out, greeting)
	}
	if err := ctx.StartDetached("Greet", "detached"); err != nil {
		return nil, err
	}
	_, err := durabox.Child[string](ctx, "Missing", nil)
	return append(out, err.Error()), nil
}

// Signals starts a Listener it does not wait for, raises a persistent Ping
// at it and at an instance that does not exist, and returns what became of
// each raise.
func Signals(ctx *durabox.Context, _ any) ([]string, error) {
	listener := ctx.InstanceID() + "-listener"
	if err := ctx.StartDetached("Listener", nil, listener); err != nil {
		return nil, err
	}
	var out []string
	for _, to := range []string{listener, "nobody"} {
		outcome := "delivered to " + to
		if err := ctx.Raise(to, "Ping", "hi", true).Get(nil); err != nil {
			outcome = err.Error()
		}
		out = append(out, outcome)
	}
	return out, nil
}

// Listener returns the data of the persistent event Ping.
func Listener(ctx *durabox.Context, _ any) (string, error) {
	return durabox.Await[string](ctx.WaitEventPersistent("Ping"))
}

// Greet greets name; an empty name fails.
func Greet(ctx *durabox.Context, name string) (string, error) {
	if name == "" {
		return "", errors.New("no name")
	}
	return durabox.Call[string](ctx, "Echo", "Hello, "+name)
}

// Rounds continues as new at each Next event until round 3, which takes
// the two persistent Notes raised in the earlier rounds.
func Rounds(ctx *durabox.Context, round int) ([]string, error) {
	if round < 3 {
		if err := ctx.WaitEvent("Next").Get(nil); err != nil {
			return nil, err
		}
		return nil, ctx.ContinueAsNew(round + 1)
	}
	var notes []string
	for range 2 {
		note, err := durabox.Await[string](ctx.WaitEventPersistent("Note"))
		if err != nil {
			return nil, err
		}
		notes = append(notes, note)
	}
	return notes, nil
}

// Attempt is Flaky's input.
type Attempt struct {
	Number   int `json:"number"`
	Failures int `json:"failures"`
}

// Retries retries Flaky in a loop with a durable timer between attempts,
// then lets CallWithRetry give up on Down.
func Retries(ctx *durabox.Context, _ any) (string, error) {
	var out string
	for n := 1; ; n++ {
		var err error
		if out, err = durabox.Call[string](ctx, "Flaky", Attempt{Number: n, Failures: 2}); err == nil {
			break
		}
		if err := ctx.Sleep(20 * time.Millisecond); err != nil {
			return "", err
		}
	}
	policy := durabox.RetryPolicy{MaxAttempts: 3, InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 2}
	_, err := durabox.CallWithRetry[string](ctx, policy, "Down", nil)
	return out + "; " + err.Error(), nil
}

// Echo returns its input.
func Echo(_ context.Context, s string) (string, error) { return s, nil }

// Flaky fails its first a.Failures attempts.
func Flaky(_ context.Context, a Attempt) (string, error) {
	if a.Number <= a.Failures {
		return "", fmt.Errorf("attempt %d failed", a.Number)
	}
	return fmt.Sprintf("attempt %d worked", a.Number), nil
}

// Down always fails.
func Down(context.Context, any) (string, error) { return "", errors.New("down") }

func main() {}
