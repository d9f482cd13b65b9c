package main

import "github.com/durabox/durabox/guest-sdk/durabox"

// What a reset keeps.

func init() {
	// Statuses sets its custom status to "one", waits for "go", sets it to
	// "two" and waits for "go" again: a reset to the first go keeps "one"
	// and discards "two", until the step it runs again sets "two" anew.
	durabox.RegisterOrchestration("Statuses", func(ctx *durabox.Context, _ any) (string, error) {
		for _, status := range []string{"one", "two"} {
			ctx.SetCustomStatus(status)
			if err := ctx.WaitEvent("go").Get(nil); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
}
