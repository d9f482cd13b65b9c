// Command attributes holds an orchestration that sets search attributes
// (ctx.SetAttributes) as it goes, for the host's tests of list filters.
package main

import (
	"context"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// Order is what an order orchestration starts with.
type Order struct {
	Customer string   `json:"customer"`
	Amount   float64  `json:"amount"`
	Tags     []string `json:"tags"`
}

func init() {
	durabox.RegisterActivity("Charge", func(_ context.Context, amount float64) (bool, error) { return amount < 1000, nil })
	// Order tags itself with its customer, amount, tags and the time it
	// was placed; once charged, says whether it is paid and drops its
	// tags; then waits for "Ship". On "Again" it continues as new.
	durabox.RegisterOrchestration("Order", func(ctx *durabox.Context, o Order) (string, error) {
		ctx.SetAttributes(map[string]any{"customer": o.Customer, "amount": o.Amount, "tags": o.Tags, "placed": ctx.Now()})
		paid, err := durabox.Call[bool](ctx, "Charge", o.Amount)
		if err != nil {
			return "", err
		}
		ctx.SetAttributes(map[string]any{"paid": paid, "tags": nil})
		next, err := durabox.Await[string](ctx.WaitEvent("Next"))
		if err != nil {
			return "", err
		}
		if next == "again" {
			return "", ctx.ContinueAsNew(Order{Customer: o.Customer})
		}
		return "shipped", nil
	})
}

func main() {}
