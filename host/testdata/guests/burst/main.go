// Command burst is a guest with an orchestration that schedules its input's
// number of activities in one turn, one that starts as many children, and
// a hello beside them, for the tests of fairness: a hello started while
// the burst's activities or children wait must not wait for all of them.
package main

import (
	"context"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Burst", func(ctx *durabox.Context, n int) (int, error) {
		futures := make([]*durabox.Future, n)
		for i := range futures {
			futures[i] = ctx.CallActivity("Echo", i)
		}
		done, err := durabox.All[int](futures...)
		return len(done), err
	})
	durabox.RegisterOrchestration("Parent", func(ctx *durabox.Context, n int) (int, error) {
		futures := make([]*durabox.Future, n)
		for i := range futures {
			futures[i] = ctx.CallChild("Child", i)
		}
		done, err := durabox.All[int](futures...)
		return len(done), err
	})
	durabox.RegisterOrchestration("Child", func(_ *durabox.Context, i int) (int, error) { return i, nil })
	durabox.RegisterOrchestration("Hello", func(ctx *durabox.Context, who string) (string, error) {
		return durabox.Call[string](ctx, "Greet", who)
	})
	durabox.RegisterActivity("Echo", func(_ context.Context, i int) (int, error) { return i, nil })
	durabox.RegisterActivity("Greet", func(_ context.Context, who string) (string, error) { return "Hello, " + who + "!", nil })
}

func main() {}
