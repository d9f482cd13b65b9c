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
	durabox.RegisterActivity("Work", func(_ context.Context, millis int) (string, error) {
		time.Sleep(time.Duration(millis) * time.Millisecond)
		return fmt.Sprintf("worked %dms", millis), nil
	})
}

func main() {}
