// Command plaingo is a guest whose orchestrations use their Context from
// goroutines started with a plain go statement instead of ctx.Go or from
// finalizers, or wait on something outside the SDK, or stop their goroutine
// or a branch's, the ways a careless author would: each must fail its
// instance with a message that says what to do instead, never leave it
// Running with nothing to wake it. Branches does it right.
package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	// FanOut calls Echo from n plain goroutines and collects the results
	// from a channel.
	durabox.RegisterOrchestration("FanOut", func(ctx *durabox.Context, n int) ([]string, error) {
		results := make(chan string)
		for i := range n {
			go func() {
				s, err := durabox.Call[string](ctx, "Echo", fmt.Sprint(i))
				if err != nil {
					s = err.Error()
				}
				results <- s
			}()
		}
		var out []string
		for range n {
			out = append(out, <-results)
		}
		return out, nil
	})
	// Beside waits on an activity of its own while a plain goroutine waits
	// on another.
	durabox.RegisterOrchestration("Beside", func(ctx *durabox.Context, _ any) (string, error) {
		go durabox.Call[string](ctx, "Echo", "from the goroutine")
		return durabox.Call[string](ctx, "Echo", "from the orchestration")
	})
	// Status sets the custom status from a plain goroutine, which waits on
	// nothing, and waits for it with a WaitGroup.
	durabox.RegisterOrchestration("Status", func(ctx *durabox.Context, _ any) (string, error) {
		var wg sync.WaitGroup
		wg.Go(func() { ctx.SetCustomStatus("set from a goroutine") })
		wg.Wait()
		return durabox.Call[string](ctx, "Echo", "done")
	})
	// Later starts a plain goroutine that waits on a future the
	// orchestration made, after the orchestration has moved on.
	durabox.RegisterOrchestration("Later", func(ctx *durabox.Context, _ any) (string, error) {
		first := ctx.CallActivity("Echo", "first")
		go first.Get(nil)
		return durabox.Call[string](ctx, "Echo", "second")
	})
	// Finalizer sets the custom status from a finalizer, which runs on a
	// goroutine of the Go runtime's after a collection.
	durabox.RegisterOrchestration("Finalizer", func(ctx *durabox.Context, _ any) (string, error) {
		garbage := new([64]byte)
		runtime.SetFinalizer(garbage, func(*[64]byte) { ctx.SetCustomStatus("finalized") })
		garbage = nil
		runtime.GC()
		return durabox.Call[string](ctx, "Echo", "collected")
	})
	// Collected sets the custom status from a finalizer that a collection
	// the allocator started (not runtime.GC) queued, while the
	// orchestration goes on: the finalizer runs when the Go scheduler next
	// runs another goroutine.
	durabox.RegisterOrchestration("Collected", func(ctx *durabox.Context, _ any) (string, error) {
		garbage := new([64]byte)
		runtime.SetFinalizer(garbage, func(*[64]byte) { ctx.SetCustomStatus("finalized") })
		garbage = nil
		var kept [][]byte
		for i := range 1 << 15 {
			if i%256 == 0 {
				kept = nil
			}
			kept = append(kept, make([]byte, 1024))
		}
		return durabox.Call[string](ctx, "Echo", "collected")
	})
	// SelectNothing waits on no future at all.
	durabox.RegisterOrchestration("SelectNothing", func(ctx *durabox.Context, _ any) (int, error) {
		return ctx.Select(), nil
	})
	// Mutex locks a mutex it holds.
	durabox.RegisterOrchestration("Mutex", func(ctx *durabox.Context, _ any) (string, error) {
		var mu sync.Mutex
		mu.Lock()
		mu.Lock()
		return "", nil
	})
	// WaitsForBranch waits on a channel that a branch it started with
	// ctx.Go would fill, but a branch runs only while the others wait on
	// futures.
	durabox.RegisterOrchestration("WaitsForBranch", func(ctx *durabox.Context, _ any) (string, error) {
		done := make(chan string)
		ctx.Go(func(ctx *durabox.Context) {
			s, _ := durabox.Call[string](ctx, "Echo", "branch")
			done <- s
		})
		return <-done, nil
	})
	// Goexit ends the orchestration's goroutine without returning.
	durabox.RegisterOrchestration("Goexit", func(ctx *durabox.Context, _ any) (string, error) {
		runtime.Goexit()
		return "", nil
	})
	// BranchGoexit ends a branch's goroutine without returning, while the
	// orchestration waits for the branch.
	durabox.RegisterOrchestration("BranchGoexit", func(ctx *durabox.Context, _ any) (string, error) {
		return "", ctx.Go(func(*durabox.Context) { runtime.Goexit() }).Get(nil)
	})
	// BranchPanics panics in a branch, after the branch has waited on an
	// activity.
	durabox.RegisterOrchestration("BranchPanics", func(ctx *durabox.Context, _ any) (string, error) {
		return "", ctx.Go(func(ctx *durabox.Context) {
			durabox.Call[string](ctx, "Echo", "before")
			panic("the branch panicked")
		}).Get(nil)
	})
	// Branches is the right way: ctx.Go, joined through the futures Go
	// returns.
	durabox.RegisterOrchestration("Branches", func(ctx *durabox.Context, n int) ([]string, error) {
		out := make([]string, n)
		var done []*durabox.Future
		for i := range n {
			done = append(done, ctx.Go(func(ctx *durabox.Context) {
				s, err := durabox.Call[string](ctx, "Echo", fmt.Sprint(i))
				if err != nil {
					s = err.Error()
				}
				out[i] = s
			}))
		}
		_, err := durabox.All[any](done...)
		return out, err
	})
	durabox.RegisterActivity("Echo", func(_ context.Context, s string) (string, error) { return s, nil })
}

func main() {}
