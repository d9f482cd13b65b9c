package main

import (
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// Each orchestration here changes in the v2 build in one way a recorded
// history must catch, but ChangedDelay, whose change replays.

func init() {
	durabox.RegisterOrchestration("RenamedActivity", func(ctx *durabox.Context, _ any) (string, error) {
		name := "Echo"
		if v2() {
			name = "Charge"
		}
		return durabox.Call[string](ctx, name, "card")
	})
	durabox.RegisterOrchestration("ChangedInput", func(ctx *durabox.Context, _ any) (string, error) {
		input := "card"
		if v2() {
			input = "cash"
		}
		return durabox.Call[string](ctx, "Echo", input)
	})
	durabox.RegisterOrchestration("InsertedTimer", func(ctx *durabox.Context, _ any) (string, error) {
		a, err := durabox.Call[string](ctx, "Echo", "a")
		if err != nil {
			return "", err
		}
		if v2() {
			if err := ctx.Sleep(time.Minute); err != nil {
				return "", err
			}
		}
		b, err := durabox.Call[string](ctx, "Echo", "b")
		return a + b, err
	})
	durabox.RegisterOrchestration("RenamedChild", func(ctx *durabox.Context, _ any) (int, error) {
		name := "Child"
		if v2() {
			name = "Kid"
		}
		return durabox.Child[int](ctx, name, 1)
	})
	durabox.RegisterOrchestration("ChangedChildInput", func(ctx *durabox.Context, _ any) (int, error) {
		input := 1
		if v2() {
			input = 2
		}
		return durabox.Child[int](ctx, "Child", input)
	})
	durabox.RegisterOrchestration("AttachedBecomesDetached", func(ctx *durabox.Context, _ any) (int, error) {
		if v2() {
			return 0, ctx.StartDetached("Child", 1)
		}
		return durabox.Child[int](ctx, "Child", 1)
	})
	durabox.RegisterOrchestration("DetachedBecomesAttached", func(ctx *durabox.Context, _ any) (int, error) {
		if v2() {
			return durabox.Child[int](ctx, "Child", 1)
		}
		return 0, ctx.StartDetached("Child", 1)
	})
	durabox.RegisterOrchestration("FinishesEarly", func(ctx *durabox.Context, _ any) (string, error) {
		a, err := durabox.Call[string](ctx, "Echo", "a")
		if err != nil || v2() {
			return a, err
		}
		b, err := durabox.Call[string](ctx, "Echo", "b")
		return a + b, err
	})
	durabox.RegisterOrchestration("Reordered", func(ctx *durabox.Context, _ any) ([]string, error) {
		names := []string{"a", "b"}
		if v2() {
			names = []string{"b", "a"}
		}
		return durabox.All[string](ctx.CallActivity("Echo", names[0]), ctx.CallActivity("Echo", names[1]))
	})
	durabox.RegisterOrchestration("DroppedCall", func(ctx *durabox.Context, _ any) ([]string, error) {
		futures := []*durabox.Future{ctx.CallActivity("Echo", "a")}
		if !v2() {
			futures = append(futures, ctx.CallActivity("Echo", "b"))
		}
		return durabox.All[string](futures...)
	})
	durabox.RegisterOrchestration("ExtraCall", func(ctx *durabox.Context, _ any) (string, error) {
		a, err := durabox.Call[string](ctx, "Echo", "a")
		if v2() {
			ctx.CallActivity("Echo", "audit") // not waited for
		}
		return a, err
	})
	durabox.RegisterOrchestration("RenamedWait", func(ctx *durabox.Context, _ any) (string, error) {
		name := "Paid"
		if v2() {
			name = "Settled"
		}
		return durabox.Await[string](ctx.WaitEvent(name))
	})
	durabox.RegisterOrchestration("ChangedDelay", func(ctx *durabox.Context, _ any) (string, error) {
		delay := time.Hour
		if v2() {
			delay = 2 * time.Hour
		}
		return "slept", ctx.Sleep(delay)
	})
	durabox.RegisterOrchestration("ChangedStatus", func(ctx *durabox.Context, _ any) (string, error) {
		status := "charging the card"
		if v2() {
			status = "charging the card twice"
		}
		ctx.SetCustomStatus(status)
		return durabox.Call[string](ctx, "Echo", "card")
	})
	durabox.RegisterOrchestration("ChangedResult", func(ctx *durabox.Context, _ any) (string, error) {
		s, err := durabox.Call[string](ctx, "Echo", "done")
		return s + " by " + version, err
	})
}
