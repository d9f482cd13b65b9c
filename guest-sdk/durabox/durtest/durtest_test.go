package durtest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// The orchestrations these tests run, registered as a module registers
// its own.
func init() {
	durabox.RegisterOrchestration("Greet", func(ctx *durabox.Context, name string) (string, error) {
		ctx.SetCustomStatus("greeting " + name)
		return durabox.Call[string](ctx, "Hello", name)
	})
	durabox.RegisterActivity("Hello", func(_ context.Context, name string) (string, error) {
		if name == "" {
			return "", errors.New("no name")
		}
		return "Hello, " + name, nil
	})
	durabox.RegisterOrchestration("Nap", func(ctx *durabox.Context, d string) (time.Time, error) {
		delay, err := time.ParseDuration(d)
		if err != nil {
			return time.Time{}, err
		}
		if err := ctx.Sleep(delay); err != nil {
			return time.Time{}, err
		}
		return ctx.Now(), nil
	})
	durabox.RegisterOrchestration("Approve", func(ctx *durabox.Context, timeout time.Duration) (string, error) {
		decision := ctx.WaitEvent("Decision")
		if ctx.Select(decision, ctx.NewTimer(timeout)) == 1 {
			return "expired", nil
		}
		return durabox.Await[string](decision)
	})
	durabox.RegisterOrchestration("Later", func(ctx *durabox.Context, _ any) (string, error) {
		if err := ctx.Sleep(time.Minute); err != nil {
			return "", err
		}
		return durabox.Await[string](ctx.WaitEvent("Decision"))
	})
	durabox.RegisterOrchestration("Rounds", func(ctx *durabox.Context, round int) ([]string, error) {
		if round < 3 {
			if err := ctx.Sleep(time.Minute); err != nil {
				return nil, err
			}
			return nil, ctx.ContinueAsNew(round + 1)
		}
		return durabox.All[string](ctx.WaitEventPersistent("Note"), ctx.WaitEventPersistent("Note"))
	})
	// Loop greets each name in turn, telling Hello the history's length,
	// and continues as new with those left when the history is long
	// enough.
	durabox.RegisterOrchestration("Loop", func(ctx *durabox.Context, names []string) (string, error) {
		for ; len(names) > 0; names = names[1:] {
			if ctx.ShouldContinueAsNew() {
				return "", ctx.ContinueAsNew(names)
			}
			if _, err := durabox.Call[string](ctx, "Hello", fmt.Sprintf("%s at %d", names[0], ctx.HistoryLength())); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	durabox.RegisterOrchestration("Family", func(ctx *durabox.Context, names []string) ([]string, error) {
		var out []string
		for _, n := range names {
			greeting, err := durabox.Child[string](ctx, "Greet", n)
			if err != nil {
				out = append(out, err.Error())
				continue
			}
			out = append(out, greeting)
		}
		if err := ctx.StartDetached("Greet", "detached"); err != nil {
			return nil, err
		}
		_, err := durabox.Child[string](ctx, "Missing", nil)
		return append(out, err.Error()), nil
	})
	durabox.RegisterOrchestration("Deadline", func(ctx *durabox.Context, timeout time.Duration) (string, error) {
		return durabox.Call[string](ctx, "Hello", "deadline", durabox.WithTimeout(timeout))
	})
	durabox.RegisterOrchestration("Guarded", func(ctx *durabox.Context, _ any) (string, error) {
		child := ctx.CallChild("Approve", time.Hour)
		work := ctx.CallActivity("Hello", "slow")
		err := child.Get(nil)
		if !errors.Is(err, durabox.ErrCanceled) || !errors.Is(work.Get(nil), durabox.ErrCanceled) {
			return "", fmt.Errorf("not cancelled: %v", err)
		}
		if _, err := durabox.Call[string](ctx, "Hello", "cleanup"); err != nil {
			return "", err
		}
		return "", ctx.Err()
	})
	durabox.RegisterOrchestration("Race", func(ctx *durabox.Context, _ any) (string, error) {
		work := ctx.CallActivity("Hello", "race")
		stop := ctx.WaitEvent("Stop")
		if ctx.Select(work, stop) == 1 {
			return "stopped", nil
		}
		return durabox.Await[string](work)
	})
	durabox.RegisterOrchestration("Persevere", func(ctx *durabox.Context, _ any) (string, error) {
		return durabox.CallWithRetry[string](ctx, durabox.RetryPolicy{MaxAttempts: 4, InitialInterval: time.Second, BackoffCoefficient: 3}, "Flaky", nil)
	})
	durabox.RegisterOrchestration("PersevereOnTheHost", func(ctx *durabox.Context, _ any) (string, error) {
		return durabox.Call[string](ctx, "Flaky", nil, durabox.WithRetry(durabox.RetryPolicy{MaxAttempts: 4, InitialInterval: time.Second, BackoffCoefficient: 3,
			NonRetryableErrors: []string{"Fatal"}}))
	})
	durabox.RegisterOrchestration("Versioned", func(ctx *durabox.Context, _ any) (string, error) {
		if version == 2 {
			return durabox.Call[string](ctx, "Hello", "v2")
		}
		return durabox.Call[string](ctx, "Hello", "v1")
	})
	// Draw records, in an activity's input, what ctx.Rand and ctx.NewGUID
	// give an instance.
	durabox.RegisterOrchestration("Draw", func(ctx *durabox.Context, _ any) (string, error) {
		return durabox.Call[string](ctx, "Hello", fmt.Sprint(ctx.Rand().Uint64(), " ", ctx.Rand().IntN(1000), " ", ctx.NewGUID()))
	})
	durabox.RegisterOrchestration("Stuck", func(ctx *durabox.Context, _ any) (string, error) {
		<-make(chan struct{})
		return "", nil
	})
	durabox.RegisterOrchestration("PlainGo", func(ctx *durabox.Context, _ any) (string, error) {
		done := make(chan string)
		go func() {
			s, _ := durabox.Call[string](ctx, "Hello", "from a goroutine")
			done <- s
		}()
		return <-done, nil
	})
}

// version selects what Versioned does, as a new version of its code would.
var version = 1
