// Command queries holds an orchestration that answers queries while it
// waits for events and after it has ended, with handlers that behave and
// handlers that try what a query may not.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// draw reads crypto/rand, whose stream is a function of the instance's
// history in an orchestration: a query that moved it would make the next
// step draw other bytes than its replays do.
func draw() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func recurse(n int) int { return recurse(n+1) + 1 }

func init() {
	// Counter waits for the event Next n times; after each it draws random
	// bytes and echoes them through an activity, so that history records
	// what it drew. It answers Count (how many it has had, plus the
	// argument) and Draws (what it drew), also once it has ended.
	durabox.RegisterOrchestration("Counter", func(ctx *durabox.Context, n int) (int, error) {
		count := 0
		var draws []string
		durabox.HandleQuery(ctx, "Count", func(plus int) (int, error) { return count + plus, nil })
		durabox.HandleQuery(ctx, "Draws", func(struct{}) ([]string, error) { return draws, nil })
		// Draw moves the random stream and reads the clock, which the host
		// puts back after the query.
		durabox.HandleQuery(ctx, "Draw", func(struct{}) (string, error) { return draw(), nil })
		durabox.HandleQuery(ctx, "Refuse", func(struct{}) (int, error) { return 0, errors.New("not today") })
		// Schedule tries to call an activity, which a query may not.
		durabox.HandleQuery(ctx, "Schedule", func(struct{}) (string, error) {
			return durabox.Call[string](ctx, "Echo", "from a query")
		})
		// Crash overflows the stack, a fatal error no recover stops: the
		// wasm instance ends, the orchestration instance goes on.
		durabox.HandleQuery(ctx, "Crash", func(depth int) (int, error) { return recurse(depth), nil })
		for count < n {
			if err := ctx.WaitEvent("Next").Get(nil); err != nil {
				return 0, err
			}
			echoed, err := durabox.Call[string](ctx, "Echo", draw())
			if err != nil {
				return 0, err
			}
			draws = append(draws, echoed)
			count++
		}
		return count, nil
	})
	durabox.RegisterActivity("Echo", func(_ context.Context, s string) (string, error) { return s, nil })
}

func main() {}
