// Command updates holds an orchestration that takes updates: a cart whose
// items each reserve stock through an activity, with a validator that
// refuses a quantity below 1, and a checkout that ends it once every
// handler has returned.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

type item struct {
	Name string `json:"name"`
	Qty  int    `json:"qty"`
}

func init() {
	// Cart takes Add until Checkout, then waits for the handlers still
	// running and completes with the items. Slow answers after an hour.
	durabox.RegisterOrchestration("Cart", func(ctx *durabox.Context, _ struct{}) ([]string, error) {
		items := []string{}
		closed := false
		durabox.HandleUpdate(ctx, "Add", func(ctx *durabox.Context, it item) (int, error) {
			if _, err := durabox.Call[string](ctx, "Reserve", it); err != nil {
				return 0, err
			}
			items = append(items, it.Name)
			return len(items), nil
		}, durabox.WithValidator(func(it item) error {
			switch {
			case closed:
				return errors.New("the cart is checked out")
			case it.Qty < 1:
				return errors.New("a quantity of at least 1")
			}
			return nil
		}))
		durabox.HandleUpdate(ctx, "Slow", func(ctx *durabox.Context, _ struct{}) (string, error) {
			if err := ctx.Sleep(time.Hour); err != nil {
				return "", err
			}
			return "slept", nil
		})
		durabox.HandleUpdate(ctx, "Checkout", func(ctx *durabox.Context, _ struct{}) (int, error) {
			closed = true
			return len(items), nil
		})
		durabox.HandleQuery(ctx, "Items", func(struct{}) ([]string, error) { return items, nil })
		if err := ctx.Await(func() bool { return closed }); err != nil {
			return nil, err
		}
		if err := ctx.Await(ctx.AllHandlersFinished); err != nil {
			return nil, err
		}
		return items, nil
	})
	durabox.RegisterActivity("Reserve", func(_ context.Context, it item) (string, error) { return "reserved " + it.Name, nil })
}

func main() {}
