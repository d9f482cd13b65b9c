package main

import (
	"math/rand"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// The deterministic scheduler's rules (reference 004), through ctx.Go.
// Every orchestration here labels its activity calls, so the order of its
// ActivityScheduled events is the order its units ran in.

// echo calls Echo with label and waits for it.
func echo(ctx *durabox.Context, label string) string {
	s, _ := durabox.Call[string](ctx, "Echo", label)
	return s
}

// join waits for every branch.
func join(branches ...*durabox.Future) error {
	_, err := durabox.All[any](branches...)
	return err
}

func init() {
	// Parallel is the reference's example: two branches, A then C, and B
	// then D, each passing on what its first call returned. The root's
	// call after it starts them comes first: branches start in the next
	// round.
	durabox.RegisterOrchestration("Parallel", func(ctx *durabox.Context, _ any) (string, error) {
		left := ctx.Go(func(c *durabox.Context) { echo(c, "C after "+echo(c, "A")) })
		right := ctx.Go(func(c *durabox.Context) { echo(c, "D after "+echo(c, "B")) })
		ctx.CallActivity("Echo", "root")
		return "", join(left, right)
	})
	// Together parks two branches on one event, the second before the
	// first; the event wakes both in one activation, and they run in the
	// order of their ids.
	durabox.RegisterOrchestration("Together", func(ctx *durabox.Context, _ any) (string, error) {
		gate := ctx.WaitEvent("go")
		first := ctx.Go(func(c *durabox.Context) {
			echo(c, "first waits")
			gate.Get(nil)
			echo(c, "first")
		})
		second := ctx.Go(func(c *durabox.Context) {
			gate.Get(nil)
			echo(c, "second")
		})
		return "", join(first, second)
	})
	// Deferred: the event wakes branches 0 and 3. Each cancels, by a
	// select, a wait another branch is parked on (0 wakes 2, 3 wakes 1):
	// those run in the next round, in the order of their ids, after every
	// branch of this round.
	durabox.RegisterOrchestration("Deferred", func(ctx *durabox.Context, _ any) (string, error) {
		gate, w1, w2 := ctx.WaitEvent("go"), ctx.WaitEvent("never 1"), ctx.WaitEvent("never 2")
		wakes := func(other *durabox.Future, label string) func(*durabox.Context) {
			return func(c *durabox.Context) {
				gate.Get(nil)
				c.Select(gate, other)
				echo(c, label)
			}
		}
		woken := func(w *durabox.Future, label string) func(*durabox.Context) {
			return func(c *durabox.Context) {
				w.Get(nil)
				echo(c, label)
			}
		}
		return "", join(ctx.Go(wakes(w2, "0")), ctx.Go(woken(w1, "1")), ctx.Go(woken(w2, "2")), ctx.Go(wakes(w1, "3")))
	})
	// NonPausing: branch 0 makes every call that does not wait (some emit
	// commands) between two activity calls, in one step: branch 1 runs
	// after all of them.
	durabox.RegisterOrchestration("NonPausing", func(ctx *durabox.Context, _ any) (string, error) {
		zero := ctx.Go(func(c *durabox.Context) {
			c.CallActivity("Echo", "0 before")
			_, _, _, _ = c.Now(), time.Now(), c.NewGUID(), rand.Int()
			_, _, _ = c.IsReplaying(), c.InstanceID(), c.Err()
			c.Logger().Info("still branch 0")
			c.SetCustomStatus("set by branch 0")
			c.NewTimer(time.Hour)
			c.WaitEvent("never")
			c.StartDetached("Child", 7)
			echo(c, "0 after")
		})
		one := ctx.Go(func(c *durabox.Context) { echo(c, "1") })
		return "", join(zero, one)
	})
	// Nested: the root, its branches 0 and 1, and theirs (0 0, 0 1, 1 0)
	// all park on one event, in the order they run; the event wakes them
	// all, and they run in the lexicographic order of their ids.
	durabox.RegisterOrchestration("Nested", func(ctx *durabox.Context, _ any) (string, error) {
		gate := ctx.WaitEvent("go")
		unit := func(label string, children ...string) func(*durabox.Context) {
			return nestedUnit(gate, label, children...)
		}
		zero := ctx.Go(unit("0", "0 0", "0 1"))
		one := ctx.Go(unit("1", "1 0"))
		gate.Get(nil)
		echo(ctx, "root")
		return "", join(zero, one)
	})
}

// nestedUnit starts a branch for each child, then waits for gate and
// calls Echo with label.
func nestedUnit(gate *durabox.Future, label string, children ...string) func(*durabox.Context) {
	return func(c *durabox.Context) {
		var branches []*durabox.Future
		for _, child := range children {
			branches = append(branches, c.Go(nestedUnit(gate, child)))
		}
		gate.Get(nil)
		echo(c, label)
		join(branches...)
	}
}
