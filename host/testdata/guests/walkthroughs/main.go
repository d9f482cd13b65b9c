// Command walkthroughs holds the multi-turn walkthroughs of the
// durable-futures reference as orchestrations: select with a timeout where
// the activity wins, repeated selects whose losing timers fire late, and a
// fan-out whose completions arrive out of order.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("SelectThenWork", func(ctx *durabox.Context, _ any) (string, error) {
		work := ctx.CallActivity("Work", 10)
		if ctx.Select(work, ctx.NewTimer(time.Hour)) != 0 {
			return "", fmt.Errorf("the hour-long timer beat a 10ms activity")
		}
		first, err := durabox.Await[string](work)
		if err != nil {
			return "", err
		}
		second, err := durabox.Call[string](ctx, "Work", 20)
		return first + ", then " + second, err
	})
	durabox.RegisterOrchestration("RepeatedSelect", func(ctx *durabox.Context, rounds int) (string, error) {
		won := 0
		for range rounds {
			work := ctx.CallActivity("Work", 5)
			if ctx.Select(work, ctx.NewTimer(time.Second)) == 0 {
				won++
			}
		}
		// The losing timers come due while this one runs: they must not wake
		// it early, nor anything after it.
		if err := ctx.Sleep(1500 * time.Millisecond); err != nil {
			return "", err
		}
		return fmt.Sprintf("activity won %d of %d", won, rounds), nil
	})
	durabox.RegisterOrchestration("FanOut", func(ctx *durabox.Context, n int) ([]string, error) {
		var futures []*durabox.Future
		for i := range n {
			// Later calls finish first.
			futures = append(futures, ctx.CallActivity("Work", 150*(n-i)))
		}
		return durabox.All[string](futures...)
	})
	durabox.RegisterOrchestration("CancelMe", func(ctx *durabox.Context, _ any) (string, error) {
		err := ctx.CallChild("Sleeper", "1h").Get(nil)
		if ctx.Err() == nil {
			return "", fmt.Errorf("not cancelled, child said %v", err)
		}
		// Clean up, then end as cancelled.
		if _, err := durabox.Call[string](ctx, "Work", 1); err != nil {
			return "", err
		}
		return "", ctx.Err()
	})
	durabox.RegisterOrchestration("Family", func(ctx *durabox.Context, _ any) (string, error) {
		// A child and a detached instance that sleep an hour, and a timer
		// of its own.
		child := ctx.CallChild("Sleeper", "1h")
		if err := ctx.StartDetached("Sleeper", "1h"); err != nil {
			return "", err
		}
		ctx.Select(child, ctx.NewTimer(time.Hour))
		return "woke", nil
	})
	durabox.RegisterOrchestration("Sleeper", func(ctx *durabox.Context, d string) (string, error) {
		pause, err := time.ParseDuration(d)
		if err != nil {
			return "", err
		}
		return "slept", ctx.Sleep(pause)
	})
	durabox.RegisterOrchestration("Retrying", func(ctx *durabox.Context, activity string) (string, error) {
		policy := durabox.RetryPolicy{MaxAttempts: 3, InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 3, MaxInterval: 20 * time.Millisecond}
		return durabox.CallWithRetry[string](ctx, policy, activity, 5)
	})
	durabox.RegisterActivity("AlwaysFails", func(_ context.Context, _ int) (string, error) {
		return "", fmt.Errorf("the service is down")
	})
	durabox.RegisterActivity("Work", func(_ context.Context, millis int) (string, error) {
		time.Sleep(time.Duration(millis) * time.Millisecond)
		return fmt.Sprintf("worked %dms", millis), nil
	})
}

func main() {}
