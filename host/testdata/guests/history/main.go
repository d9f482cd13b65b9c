// Command history holds an orchestration that runs long by the book: it
// works through its input in a loop of activity calls and continues as new
// whenever the host says its history is long enough
// (ctx.ShouldContinueAsNew).
package main

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	// Note echoes what the orchestration tells it: the history's length
	// and size when the orchestration called it. The input is compared on
	// every replay, so a replay told otherwise than the first run diverges.
	durabox.RegisterActivity("Note", func(_ context.Context, s string) (string, error) { return s, nil })
	// Loop calls Note once for each of the n items left, continuing as new
	// with the items still to do when the history is long enough.
	durabox.RegisterOrchestration("Loop", func(ctx *durabox.Context, n int) (string, error) {
		for ; n > 0; n-- {
			if ctx.ShouldContinueAsNew() {
				return "", ctx.ContinueAsNew(n)
			}
			if _, err := durabox.Call[string](ctx, "Note", fmt.Sprintf("%d %d", ctx.HistoryLength(), ctx.HistorySize())); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
}

func main() {}
