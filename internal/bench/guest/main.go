// Command guest is the module the benchmark suite runs: orchestrations
// whose own work is negligible, so that what is measured is the host.
package main

import (
	"context"
	"strings"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Sequential", Sequential)
	durabox.RegisterOrchestration("FanOut", FanOut)
	durabox.RegisterOrchestration("Idle", Idle)
	durabox.RegisterOrchestration("Crunch", Crunch)
	durabox.RegisterOrchestration("Payload", Payload)
	durabox.RegisterOrchestration("Queried", Queried)
	durabox.RegisterOrchestration("Updated", Updated)
	durabox.RegisterOrchestration("Children", Children)
	durabox.RegisterOrchestration("Child", Child)
	durabox.RegisterOrchestration("Events", Events)
	durabox.RegisterOrchestration("SequentialQueued", SequentialQueued)
	durabox.RegisterOrchestration("FanOutQueued", FanOutQueued)
	durabox.RegisterActivity("Echo", func(_ context.Context, i int) (int, error) { return i, nil })
	durabox.RegisterActivity("Bytes", func(_ context.Context, n int) (string, error) { return strings.Repeat("r", n), nil })
}

// Sequential calls Echo n times, one after another, and sums the results.
func Sequential(ctx *durabox.Context, n int) (int, error) { return sequential(ctx, n) }

// SequentialQueued is Sequential with the calls on the task queue
// "bench", for workers outside the host.
func SequentialQueued(ctx *durabox.Context, n int) (int, error) {
	return sequential(ctx, n, durabox.OnQueue("bench"))
}

// sequential calls Echo n times with opts, one after another, and sums
// the results.
func sequential(ctx *durabox.Context, n int, opts ...durabox.CallOption) (int, error) {
	sum := 0
	for i := range n {
		v, err := durabox.Call[int](ctx, "Echo", i, opts...)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// FanOut starts n Echo calls at once, joins them, and sums the results.
func FanOut(ctx *durabox.Context, n int) (int, error) { return fanOut(ctx, n) }

// FanOutQueued is FanOut with the calls on the task queue "bench".
func FanOutQueued(ctx *durabox.Context, n int) (int, error) {
	return fanOut(ctx, n, durabox.OnQueue("bench"))
}

// fanOut starts n Echo calls with opts at once, joins them, and sums the
// results.
func fanOut(ctx *durabox.Context, n int, opts ...durabox.CallOption) (int, error) {
	futures := make([]*durabox.Future, n)
	for i := range futures {
		futures[i] = ctx.CallActivity("Echo", i, opts...)
	}
	results, err := durabox.All[int](futures...)
	if err != nil {
		return 0, err
	}
	sum := 0
	for _, v := range results {
		sum += v
	}
	return sum, nil
}

// Crunch runs n loop iterations of integer arithmetic in one step: a
// CPU-heavy step. It returns whether the result is not zero, so that the
// work is not optimized away (it never is zero).
func Crunch(_ *durabox.Context, n int) (bool, error) {
	x := uint64(1)
	for i := range n {
		x = x*6364136223846793005 + uint64(i)
		x ^= x >> 29
	}
	return x != 0, nil
}

// Idle waits for a Wake event: an instance that sits in the cache.
func Idle(ctx *durabox.Context, _ any) (string, error) {
	var s string
	err := ctx.WaitEvent("Wake").Get(&s)
	return s, err
}

// Payload takes a large input, asks the Bytes activity for a result as
// large, and returns the two lengths: large payloads through the host.
func Payload(ctx *durabox.Context, input string) ([2]int, error) {
	result, err := durabox.Call[string](ctx, "Bytes", len(input))
	return [2]int{len(input), len(result)}, err
}

// Queried calls Echo n times, one after another, then waits for a Wake
// event; its query Done answers how many calls it has made.
func Queried(ctx *durabox.Context, n int) (int, error) {
	done := 0
	durabox.HandleQuery(ctx, "Done", func(struct{}) (int, error) { return done, nil })
	for ; done < n; done++ {
		if _, err := durabox.Call[int](ctx, "Echo", done); err != nil {
			return 0, err
		}
	}
	return done, ctx.WaitEvent("Wake").Get(nil)
}

// Updated takes Add updates until it is cancelled: each adds its argument
// to a sum and answers with the sum, with no activity, so that an
// update's round trip is the request, one turn and its commit.
func Updated(ctx *durabox.Context, _ struct{}) (int, error) {
	sum := 0
	durabox.HandleUpdate(ctx, "Add", func(_ *durabox.Context, n int) (int, error) {
		sum += n
		return sum, nil
	})
	return sum, ctx.Await(func() bool { return false })
}

// Children starts n Child instances at once, joins them, and sums their
// results.
func Children(ctx *durabox.Context, n int) (int, error) {
	futures := make([]*durabox.Future, n)
	for i := range futures {
		futures[i] = ctx.CallChild("Child", i)
	}
	results, err := durabox.All[int](futures...)
	sum := 0
	for _, v := range results {
		sum += v
	}
	return sum, err
}

// Child returns its input: an instance of one step.
func Child(_ *durabox.Context, i int) (int, error) { return i, nil }

// Events waits for n E events, one after another, and sums their data.
func Events(ctx *durabox.Context, n int) (int, error) {
	sum := 0
	for range n {
		var v int
		if err := ctx.WaitEvent("E").Get(&v); err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

func main() {}
