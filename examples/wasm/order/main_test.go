package main

import (
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func TestOrderTakesLinesThenIsPaid(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	env.ActivityTakes("Charge", time.Second)
	order := env.Start("Order", "c-42")
	var total int
	if err := order.Update("AddLine", Line{SKU: "A-7", Qty: 2}, &total); err != nil || total != 500 {
		t.Fatalf("AddLine A-7 ×2: %d, %v; want 500", total, err)
	}
	events := len(order.History())
	if err := order.Update("AddLine", Line{SKU: "B-1"}, &total); err == nil || !strings.Contains(err.Error(), "a quantity of at least 1") {
		t.Fatalf("AddLine with no quantity: %v; want it refused", err)
	}
	if len(order.History()) != events {
		t.Fatalf("a refused update was recorded: %d events, then %d", events, len(order.History()))
	}
	if err := order.Update("AddLine", Line{SKU: "B-1", Qty: 1}, &total); err != nil || total != 750 {
		t.Fatalf("AddLine B-1: %d, %v; want 750", total, err)
	}
	var s Summary
	if err := order.Query("Summary", nil, &s); err != nil || s.Status != "open" || len(s.Lines) != 2 {
		t.Fatalf("Summary: %+v, %v", s, err)
	}
	var receipt string
	if err := order.Update("Submit", nil, &receipt); err != nil || receipt != "receipt-750" {
		t.Fatalf("Submit: %q, %v", receipt, err)
	}
	if order.Status() != engine.StatusCompleted {
		t.Fatalf("status %s; want Completed", order.Status())
	}
	if err := order.Update("AddLine", Line{SKU: "C-3", Qty: 1}, nil); err == nil || !strings.Contains(err.Error(), "refuses an update of a finished instance") {
		t.Fatalf("AddLine after the payment: %v; want it refused", err)
	}
	if err := order.Result(&s); err != nil || s.Status != "paid" || s.Cents != 750 || s.Receipt != "receipt-750" {
		t.Fatalf("result %+v, %v", s, err)
	}
}

func TestOrderNeverSubmittedIsAbandoned(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	order := env.Start("Order", "c-7")
	if err := order.Update("Submit", nil, nil); err == nil || !strings.Contains(err.Error(), "the order has no lines") {
		t.Fatalf("Submit of an empty order: %v; want it refused", err)
	}
	order.AdvanceToEnd()
	var s Summary
	if err := order.Result(&s); err != nil || s.Status != "abandoned" {
		t.Fatalf("result %+v, %v; want abandoned", s, err)
	}
	if got := env.Now().Sub(order.History()[0].Time); got != OpenFor {
		t.Fatalf("abandoned after %s; want %s", got, OpenFor)
	}
}
