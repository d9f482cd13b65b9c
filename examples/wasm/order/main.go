// Command order is an order a client builds by updates and reads by
// queries. Order takes AddLine updates, each priced by an activity, until
// a Submit update charges the total; a query, Summary, reads where it
// stands. A validator refuses a line with no quantity, and anything once
// the order is submitted, before anything is recorded.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Order", Order)
	durabox.RegisterActivity("PriceLine", PriceLine)
	durabox.RegisterActivity("Charge", Charge)
}

// Line is a line of an order.
type Line struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
	// Cents is the line's price, which PriceLine sets.
	Cents int `json:"cents,omitempty"`
}

// Summary is where an order stands: the Summary query's answer, and the
// orchestration's result.
type Summary struct {
	Customer string `json:"customer"`
	Status   string `json:"status"`
	Lines    []Line `json:"lines"`
	Cents    int    `json:"cents"`
	Receipt  string `json:"receipt,omitempty"`
}

// OpenFor is how long an order waits for its Submit before it is abandoned.
const OpenFor = 24 * time.Hour

// Order is an order for customer: open to AddLine and Submit updates until
// it is submitted and paid, or abandoned after OpenFor without a Submit.
func Order(ctx *durabox.Context, customer string) (Summary, error) {
	s := Summary{Customer: customer, Status: "open", Lines: []Line{}}
	open := func() error {
		if s.Status != "open" {
			return fmt.Errorf("the order is %s", s.Status)
		}
		return nil
	}
	durabox.HandleQuery(ctx, "Summary", func(struct{}) (Summary, error) { return s, nil })
	durabox.HandleUpdate(ctx, "AddLine", func(ctx *durabox.Context, l Line) (int, error) {
		cents, err := durabox.Call[int](ctx, "PriceLine", l)
		if err != nil {
			return 0, err
		}
		l.Cents = cents
		s.Lines = append(s.Lines, l)
		s.Cents += cents
		return s.Cents, nil
	}, durabox.WithValidator(func(l Line) error {
		if err := open(); err != nil {
			return err
		}
		if l.SKU == "" || l.Qty < 1 {
			return errors.New("a line needs a sku and a quantity of at least 1")
		}
		return nil
	}))
	durabox.HandleUpdate(ctx, "Submit", func(ctx *durabox.Context, _ struct{}) (string, error) {
		s.Status = "submitted"
		receipt, err := durabox.Call[string](ctx, "Charge", s.Cents)
		if err != nil {
			s.Status = "open"
			return "", err
		}
		s.Status, s.Receipt = "paid", receipt
		return receipt, nil
	}, durabox.WithValidator(func(struct{}) error {
		if err := open(); err != nil {
			return err
		}
		if len(s.Lines) == 0 {
			return errors.New("the order has no lines")
		}
		return nil
	}))
	paid, err := ctx.AwaitWithTimeout(OpenFor, func() bool { return s.Status == "paid" })
	if err != nil {
		return s, err
	}
	if !paid && s.Status == "open" {
		s.Status = "abandoned"
	}
	// A Submit that began before the deadline finishes: its caller gets
	// the answer, and the summary the outcome.
	if err := ctx.Await(ctx.AllHandlersFinished); err != nil {
		return s, err
	}
	return s, nil
}

// PriceLine prices a line: 250 cents a unit.
func PriceLine(_ context.Context, l Line) (int, error) { return 250 * l.Qty, nil }

// Charge charges the customer and returns the receipt.
func Charge(_ context.Context, cents int) (string, error) {
	if cents <= 0 {
		return "", errors.New("nothing to charge")
	}
	return fmt.Sprintf("receipt-%d", cents), nil
}

func main() {}
