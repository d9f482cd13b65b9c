package durtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func init() {
	// Cart takes items until Checkout, each reserved by an activity; a
	// quantity below 1 is refused by the validator; Checkout waits for the
	// handlers running, then completes with the items.
	durabox.RegisterOrchestration("Cart", func(ctx *durabox.Context, _ struct{}) ([]string, error) {
		var items []string
		closed := false
		durabox.HandleUpdate(ctx, "Add", func(ctx *durabox.Context, item cartItem) (int, error) {
			if _, err := durabox.Call[string](ctx, "Reserve", item.Name); err != nil {
				return 0, err
			}
			items = append(items, item.Name)
			return len(items), nil
		}, durabox.WithValidator(func(item cartItem) error {
			if item.Qty < 1 {
				return errors.New("a quantity of at least 1")
			}
			return nil
		}))
		durabox.HandleUpdate(ctx, "Checkout", func(ctx *durabox.Context, _ struct{}) (int, error) {
			closed = true
			return len(items), nil
		})
		durabox.HandleUpdate(ctx, "Panic", func(ctx *durabox.Context, _ struct{}) (int, error) { panic("boom") })
		durabox.HandleUpdate(ctx, "Sneaky", func(ctx *durabox.Context, _ struct{}) (int, error) { return 0, nil },
			durabox.WithValidator(func(struct{}) error {
				ctx.SetCustomStatus("changed by a validator")
				return nil
			}))
		durabox.HandleQuery(ctx, "Items", func(struct{}) ([]string, error) { return items, nil })
		if err := ctx.Await(func() bool { return closed }); err != nil {
			return nil, err
		}
		if err := ctx.Await(ctx.AllHandlersFinished); err != nil {
			return nil, err
		}
		return items, nil
	})
	durabox.RegisterActivity("Reserve", func(_ context.Context, name string) (string, error) { return "reserved " + name, nil })
}

type cartItem struct {
	Name string
	Qty  int
}

func TestUpdatesRunHandlersAndAnswer(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	env.ActivityTakes("Reserve", time.Minute)
	inst := env.Start("Cart", nil)
	var n int
	if err := inst.Update("Add", cartItem{"apple", 2}, &n); err != nil || n != 1 {
		t.Fatalf("Add apple: %d, %v; want 1", n, err)
	}
	historyBefore := len(inst.History())
	err := inst.Update("Add", cartItem{"pear", 0}, &n)
	if err == nil || !strings.Contains(err.Error(), "a quantity of at least 1") {
		t.Fatalf("Add pear ×0: %v; want the validator's refusal", err)
	}
	if len(inst.History()) != historyBefore {
		t.Fatalf("a refused update wrote history: %d events, then %d", historyBefore, len(inst.History()))
	}
	for _, tc := range []struct{ name, want string }{
		{"Nope", `handles no update "Nope"`},
		{"Sneaky", "the validator of update \"Sneaky\" called ctx.SetCustomStatus"},
	} {
		if err := inst.Update(tc.name, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if inst.CustomStatus() != "" || len(inst.History()) != historyBefore {
		t.Fatalf("refused updates changed the instance: custom status %q, %d events", inst.CustomStatus(), len(inst.History()))
	}
	if err := inst.Update("Panic", nil, nil); err == nil || !strings.Contains(err.Error(), "panic in the handler of update \"Panic\": boom") {
		t.Fatalf("Panic: %v; want the panic as the update's error", err)
	}
	if inst.Status() != engine.StatusRunning {
		t.Fatalf("a handler's panic ended the instance: %s", inst.Status())
	}
	var items []string
	if err := inst.Query("Items", nil, &items); err != nil || len(items) != 1 {
		t.Fatalf("Items: %v, %v", items, err)
	}
	if err := inst.Update("Checkout", nil, &n); err != nil || n != 1 {
		t.Fatalf("Checkout: %d, %v", n, err)
	}
	if inst.Status() != engine.StatusCompleted {
		t.Fatalf("status %s; want Completed", inst.Status())
	}
	if err := inst.Replay(); err != nil {
		t.Fatal(err)
	}
	var accepted, completed int
	for _, ev := range inst.History() {
		switch ev.Kind {
		case engine.UpdateAccepted:
			accepted++
		case engine.UpdateCompleted:
			completed++
		}
	}
	if accepted != 3 || completed != 3 {
		t.Fatalf("%d updates accepted and %d answered in history; want 3 and 3 (Add, Panic, Checkout)", accepted, completed)
	}
}
