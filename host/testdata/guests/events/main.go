// Command events holds orchestrations for the external-event test plan:
// positional waits (WaitEvent) and persistent ones (WaitEventPersistent),
// raced against timers, in sequence, side by side, and two of one name
// open at once.
package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// wait is WaitEvent or WaitEventPersistent.
type wait func(ctx *durabox.Context, name string) *durabox.Future

func positional(ctx *durabox.Context, name string) *durabox.Future { return ctx.WaitEvent(name) }

func persistent(ctx *durabox.Context, name string) *durabox.Future {
	return ctx.WaitEventPersistent(name)
}

// raceSleepWait races a wait for X against a short timer (the timer wins
// unless X is already there), sleeps for pause, then waits for X again.
func raceSleepWait(w wait) func(*durabox.Context, string) (string, error) {
	return func(ctx *durabox.Context, pause string) (string, error) {
		if ctx.Select(w(ctx, "X"), ctx.NewTimer(100*time.Millisecond)) == 0 {
			return "", nil
		}
		d, err := time.ParseDuration(pause)
		if err != nil {
			return "", err
		}
		if d > 0 {
			if err := ctx.Sleep(d); err != nil {
				return "", err
			}
		}
		return durabox.Await[string](w(ctx, "X"))
	}
}

// Plan is the input of the Wait orchestrations.
type Plan struct {
	// Pause is how long to sleep before the first wait.
	Pause string `json:"pause"`
	// Times is how many times to wait for X, in sequence.
	Times int `json:"times"`
}

// sleepThenWait sleeps, then waits for X plan.Times times in sequence.
func sleepThenWait(w wait) func(*durabox.Context, Plan) ([]string, error) {
	return func(ctx *durabox.Context, plan Plan) ([]string, error) {
		if plan.Pause != "" {
			d, err := time.ParseDuration(plan.Pause)
			if err != nil {
				return nil, err
			}
			if err := ctx.Sleep(d); err != nil {
				return nil, err
			}
		}
		var got []string
		for range plan.Times {
			s, err := durabox.Await[string](w(ctx, "X"))
			if err != nil {
				return nil, err
			}
			got = append(got, s)
		}
		return got, nil
	}
}

// twoWaits waits for X twice at once, with two futures or (how is
// "branches") in two branches, and returns what each wait got, in the
// order the waits were opened.
func twoWaits(ctx *durabox.Context, how string) ([]string, error) {
	if how != "branches" {
		return durabox.All[string](ctx.WaitEvent("X"), ctx.WaitEvent("X"))
	}
	got, errs := make([]string, 2), make([]error, 2)
	var branches []*durabox.Future
	for i := range got {
		branches = append(branches, ctx.Go(func(ctx *durabox.Context) {
			got[i], errs[i] = durabox.Await[string](ctx.WaitEvent("X"))
		}))
	}
	if _, err := durabox.All[any](branches...); err != nil {
		return nil, err
	}
	return got, errors.Join(errs...)
}

func init() {
	durabox.RegisterOrchestration("RaceSleepWait", raceSleepWait(positional))
	durabox.RegisterOrchestration("RaceSleepWaitPersistent", raceSleepWait(persistent))
	durabox.RegisterOrchestration("Wait", sleepThenWait(positional))
	durabox.RegisterOrchestration("WaitPersistent", sleepThenWait(persistent))
	durabox.RegisterOrchestration("ContinueThenWait", func(ctx *durabox.Context, round int) (string, error) {
		if round == 1 {
			// The first execution sleeps (a persistent event arrives
			// meanwhile, unclaimed), then continues as new.
			if err := ctx.Sleep(500 * time.Millisecond); err != nil {
				return "", err
			}
			return "", ctx.ContinueAsNew(2)
		}
		return durabox.Await[string](ctx.WaitEventPersistent("X"))
	})
	// FirstOfTwoMailboxes waits for "go", then selects between
	// persistent waits for A and B, and then takes the loser's event with
	// a wait of its own: it stays in the mailbox.
	durabox.RegisterOrchestration("FirstOfTwoMailboxes", func(ctx *durabox.Context, _ any) (string, error) {
		if err := ctx.WaitEvent("go").Get(nil); err != nil {
			return "", err
		}
		names := []string{"A", "B"}
		futures := []*durabox.Future{ctx.WaitEventPersistent("A"), ctx.WaitEventPersistent("B")}
		won := ctx.Select(futures...)
		first, err := durabox.Await[string](futures[won])
		if err != nil {
			return "", err
		}
		lost := names[1-won]
		later, err := durabox.Await[string](ctx.WaitEventPersistent(lost))
		return fmt.Sprintf("%s won with %s; %s came later with %s", names[won], first, lost, later), err
	})
	durabox.RegisterOrchestration("BothLanes", func(ctx *durabox.Context, _ any) ([]string, error) {
		return durabox.All[string](ctx.WaitEvent("X"), ctx.WaitEventPersistent("X"))
	})
	durabox.RegisterOrchestration("TwoWaits", twoWaits)
}

func main() {}
