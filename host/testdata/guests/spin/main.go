// Command spin is a guest whose activity Spin says so on stdout and then
// spins forever, for the tests that stop a running attempt: when its
// instance is cancelled or terminated, or when a select cancels it, the
// host must stop it rather than let it burn a core until its deadline.
package main

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// spins counts the rounds of the endless loop, so the compiler keeps it.
var spins int

func init() {
	durabox.RegisterActivity("Spin", func(_ context.Context, tag string) (int, error) {
		fmt.Println("spinning " + tag)
		for {
			spins++
		}
	})
	// Wait runs Spin and waits for it: its instance is cancelled or
	// terminated while Spin runs.
	durabox.RegisterOrchestration("Wait", func(ctx *durabox.Context, tag string) (int, error) {
		return durabox.Call[int](ctx, "Spin", tag)
	})
	// Select runs Spin against the event "stop", which wins; then it waits
	// for the event "finish", so that the instance runs on while the
	// cancelled Spin must stop.
	durabox.RegisterOrchestration("Select", func(ctx *durabox.Context, tag string) (string, error) {
		if ctx.Select(ctx.CallActivity("Spin", tag), ctx.WaitEvent("stop")) != 1 {
			return "", fmt.Errorf("Spin won the select")
		}
		return "stopped", ctx.WaitEvent("finish").Get(nil)
	})
}

func main() {}
