// Command conformance is the Go SDK's conformance module: the
// orchestrations and activities docs/conformance.md specifies, which the
// guest conformance kit (host/guestkit, durabox conformance) runs on the
// real host and on the raw ABI. Every SDK writes the same module in its own
// terms; this one is the reference for what each orchestration does.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterActivity("Echo", func(_ context.Context, v any) (any, error) { return v, nil })
	durabox.RegisterActivity("Boom", func(_ context.Context, s string) (any, error) { return nil, errors.New("boom: " + s) })

	durabox.RegisterOrchestration("Sequence", sequence)
	durabox.RegisterOrchestration("FanOut", fanOut)
	durabox.RegisterOrchestration("Fails", fails)
	durabox.RegisterOrchestration("Timer", timer)
	durabox.RegisterOrchestration("Race", race)
	durabox.RegisterOrchestration("Events", events)
	durabox.RegisterOrchestration("Waiter", waiter)
	durabox.RegisterOrchestration("Cancellable", cancellable)
	durabox.RegisterOrchestration("Parent", parent)
	durabox.RegisterOrchestration("Countdown", countdown)
	durabox.RegisterOrchestration("Status", status)
	durabox.RegisterOrchestration("Raiser", raiser)
	durabox.RegisterOrchestration("Queryable", queryable)
}

// sequence calls Echo with each string in turn.
func sequence(ctx *durabox.Context, in []string) ([]string, error) {
	out := []string{}
	for _, s := range in {
		r, err := durabox.Call[string](ctx, "Echo", s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// fanOut calls Echo with 0 to n-1 at once and waits for all.
func fanOut(ctx *durabox.Context, n int) ([]int, error) {
	futures := make([]*durabox.Future, n)
	for i := range futures {
		futures[i] = ctx.CallActivity("Echo", i)
	}
	out, err := durabox.All[int](futures...)
	if out == nil {
		out = []int{}
	}
	return out, err
}

// fails fails with Boom's failure.
func fails(ctx *durabox.Context, s string) (any, error) {
	_, err := durabox.Call[any](ctx, "Boom", s)
	return nil, err
}

// timer sleeps for seconds and answers how long the clock says it slept.
func timer(ctx *durabox.Context, seconds int) (int, error) {
	start := ctx.Now()
	if err := ctx.Sleep(time.Duration(seconds) * time.Second); err != nil {
		return 0, err
	}
	return int(ctx.Now().Sub(start) / time.Second), nil
}

// race races an activity against an hour's timer.
func race(ctx *durabox.Context, _ any) (any, error) {
	call := ctx.CallActivity("Echo", "fast")
	if ctx.Select(call, ctx.NewTimer(time.Hour)) == 1 {
		return "timer", nil
	}
	return durabox.Await[any](call)
}

// events waits for a positional and a persistent event.
func events(ctx *durabox.Context, _ any) ([]any, error) {
	return durabox.All[any](ctx.WaitEvent("first"), ctx.WaitEventPersistent("second"))
}

// waiter waits for the event go and answers its data.
func waiter(ctx *durabox.Context, _ any) (any, error) {
	return durabox.Await[any](ctx.WaitEvent("go"))
}

// cancellable opens one operation of every kind and waits for the
// activity, which the kit cancels before it runs.
func cancellable(ctx *durabox.Context, _ any) (any, error) {
	call := ctx.CallActivity("Echo", "never")
	ctx.NewTimer(time.Hour)
	ctx.WaitEvent("never")
	ctx.WaitEventPersistent("never-persistent")
	ctx.CallChild("Waiter", nil)
	return durabox.Await[any](call)
}

// parent starts an attached Sequence and a detached Waiter, and answers
// the Sequence's result.
func parent(ctx *durabox.Context, s string) (any, error) {
	child := ctx.CallChild("Sequence", []string{s})
	if err := ctx.StartDetached("Waiter", nil, ctx.InstanceID()+"-waiter"); err != nil {
		return nil, err
	}
	return durabox.Await[any](child)
}

// countdown echoes n and continues as new with n-1 until 0.
func countdown(ctx *durabox.Context, n int) (string, error) {
	if _, err := durabox.Call[int](ctx, "Echo", n); err != nil {
		return "", err
	}
	if n > 0 {
		return "", ctx.ContinueAsNew(n - 1)
	}
	return "liftoff", nil
}

// status sets its status, asks about a patch and echoes which path it took.
func status(ctx *durabox.Context, _ any) (string, error) {
	ctx.SetCustomStatus("working")
	path := "unpatched"
	if ctx.Patched("kit-change") {
		path = "patched"
	}
	r, err := durabox.Call[string](ctx, "Echo", path)
	if err != nil {
		return "", err
	}
	ctx.SetCustomStatus("done")
	return r, nil
}

// raiser raises go to the instance target and answers whether it was
// delivered.
func raiser(ctx *durabox.Context, target string) (bool, error) {
	err := ctx.Raise(target, "go", "raised", false).Get(nil)
	var notDelivered *durabox.RaiseError
	if errors.As(err, &notDelivered) {
		return false, nil
	}
	return err == nil, err
}

// queryable answers the query state while it waits for set and stop.
func queryable(ctx *durabox.Context, _ any) (any, error) {
	var state any = "initial"
	durabox.HandleQuery(ctx, "state", func(any) (any, error) { return state, nil })
	if err := ctx.WaitEvent("set").Get(&state); err != nil {
		return nil, err
	}
	if err := ctx.WaitEvent("stop").Get(nil); err != nil {
		return nil, err
	}
	return state, nil
}

func main() {}
