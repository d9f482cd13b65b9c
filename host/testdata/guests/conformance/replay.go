package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// What replay-aware calls see, and the order completions are seen in.

func init() {
	// Steps runs n steps, each an activity call. At every step it notes
	// whether it replays, and logs and prints the flags this wasm instance
	// has seen so far ("R" replaying, "L" live): a line reaches the host's
	// log only when its step first runs, and then it shows exactly the
	// flags the engine sent.
	durabox.RegisterOrchestration("Steps", func(ctx *durabox.Context, n int) (string, error) {
		var seen strings.Builder
		log := ctx.Logger()
		for i := range n {
			if ctx.IsReplaying() {
				seen.WriteByte('R')
			} else {
				seen.WriteByte('L')
			}
			log.Info("logged step", "i", i, "seen", seen.String())
			fmt.Printf("printed step %d seen %s\n", i, seen.String())
			if _, err := durabox.Call[string](ctx, "Echo", fmt.Sprint(i)); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	// Guids makes GUIDs in two steps, and passes each step's to an
	// activity: if a replay made others, the calls would not match.
	durabox.RegisterOrchestration("Guids", func(ctx *durabox.Context, _ any) ([]string, error) {
		first := []string{ctx.NewGUID(), ctx.NewGUID()}
		if _, err := durabox.Call[string](ctx, "Echo", strings.Join(first, " ")); err != nil {
			return nil, err
		}
		third := ctx.NewGUID()
		if _, err := durabox.Call[string](ctx, "Echo", third); err != nil {
			return nil, err
		}
		return append(first, third), nil
	})
	// FirstCompleted races two activities: the one whose completion history
	// has first wins, whatever their order in the list.
	durabox.RegisterOrchestration("FirstCompleted", func(ctx *durabox.Context, _ any) (string, error) {
		futures := []*durabox.Future{ctx.CallActivity("Echo", "a"), ctx.CallActivity("Echo", "b")}
		return durabox.Await[string](futures[ctx.Select(futures...)])
	})
	// SelectWhenBothDone races two activities only once both have
	// completed (it waits for the event "go" first): the first in the list
	// wins.
	durabox.RegisterOrchestration("SelectWhenBothDone", func(ctx *durabox.Context, _ any) (string, error) {
		futures := []*durabox.Future{ctx.CallActivity("Echo", "a"), ctx.CallActivity("Echo", "b")}
		if err := ctx.WaitEvent("go").Get(nil); err != nil {
			return "", err
		}
		return durabox.Await[string](futures[ctx.Select(futures...)])
	})
	// IgnoresCancel sleeps for an hour, and when its cancellation is
	// requested finishes anyway, with a result.
	durabox.RegisterOrchestration("IgnoresCancel", func(ctx *durabox.Context, _ any) (string, error) {
		err := ctx.Sleep(time.Hour)
		return fmt.Sprintf("finished anyway (the sleep ended with: %v)", err), nil
	})
	// HonorsCancel sleeps for an hour, and ends with the cancellation.
	durabox.RegisterOrchestration("HonorsCancel", func(ctx *durabox.Context, _ any) (string, error) {
		return "slept", ctx.Sleep(time.Hour)
	})
	// BranchLoses selects between a branch that waits for the event
	// "late" and a short timer, which wins; then it waits for the branch,
	// which was left running.
	durabox.RegisterOrchestration("BranchLoses", func(ctx *durabox.Context, _ any) (string, error) {
		var late string
		branch := ctx.Go(func(c *durabox.Context) { late, _ = durabox.Await[string](c.WaitEvent("late")) })
		if ctx.Select(branch, ctx.NewTimer(10*time.Millisecond)) == 0 {
			return "the branch won", nil
		}
		if err := branch.Get(nil); err != nil {
			return "", err
		}
		return "the timer won; then the branch got " + late, nil
	})
	// WaitsForGo calls an activity, then waits for the event "go".
	durabox.RegisterOrchestration("WaitsForGo", func(ctx *durabox.Context, _ any) (string, error) {
		if _, err := durabox.Call[string](ctx, "Echo", "before"); err != nil {
			return "", err
		}
		return durabox.Await[string](ctx.WaitEvent("go"))
	})
}
