package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/guestbuild"
)

// The poison tests stand in for a host that crashes every time it runs a
// piece of work: they take the work with a lease that expires, and take it
// again, as a restarted host would.

func poisonHost(t *testing.T) *Host {
	t.Helper()
	h := newBareHostWith(t, Options{PoisonAfter: 2})
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Deploy(context.Background(), wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"world"`), "p1"); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPoisonTurnFailsItsInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := poisonHost(t)
	now := time.Now()
	for range 2 { // two deliveries that never commit
		if item, err := lockNext(ctx, h.st, now, time.Second); err != nil || item == nil {
			t.Fatal(item, err)
		}
		now = now.Add(time.Second)
	}
	item, err := lockNext(ctx, h.st, now, time.Second)
	if err != nil || item == nil || item.Attempt != 3 {
		t.Fatalf("third delivery: %+v, %v", item, err)
	}
	h.turn(ctx, item)
	inst, err := h.Instance(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if inst.Status != engine.StatusFailed || inst.Failure == nil || !strings.Contains(inst.Failure.Message, "gave up on the instance: its turn was started 2 times and never committed") {
		t.Fatalf("instance %s, failure %+v", inst.Status, inst.Failure)
	}
	history, _ := h.History(ctx, "p1")
	if len(history) != 1 || history[0].Kind != engine.OrchestrationFailed || history[0].ID != 1 {
		t.Fatalf("history %+v", history)
	}
	if item, _ := lockNext(ctx, h.st, now.Add(time.Minute), time.Second); item != nil {
		t.Fatalf("the failed instance still has work: %+v", item)
	}
}

func TestPoisonActivityFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := poisonHost(t)
	now := time.Now()
	item, err := lockNext(ctx, h.st, now, time.Minute)
	if err != nil || item == nil {
		t.Fatal(item, err)
	}
	h.turn(ctx, item) // schedules SayHello
	for range 2 {
		if w, err := leaseNext(ctx, h.st, now, time.Second); err != nil || w == nil {
			t.Fatal(w, err)
		}
		now = now.Add(time.Second)
	}
	w, err := leaseNext(ctx, h.st, now, time.Second)
	if err != nil || w == nil || w.Attempt != 3 {
		t.Fatalf("third delivery: %+v, %v", w, err)
	}
	h.runTask(ctx, w, time.Time{}, false)
	if item, err = lockNext(ctx, h.st, now, time.Minute); err != nil || item == nil {
		t.Fatal(item, err)
	}
	h.turn(ctx, item)
	inst, err := h.Instance(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	const want = "gave up on activity SayHello: it was started 2 times and never finished"
	if inst.Status != engine.StatusFailed || inst.Failure == nil || !strings.Contains(inst.Failure.Message, want) {
		t.Fatalf("instance %s, failure %+v; want a failure saying %q", inst.Status, inst.Failure, want)
	}
}

// TestTurnAnnouncesMessagesThatCameDuringIt: a message that came while the
// instance's turn ran was announced when nobody could take the instance, so
// the turn announces it again once it has committed; a turn that leaves
// nothing behind announces nothing to the turn fetcher.
func TestTurnAnnouncesMessagesThatCameDuringIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		raise     bool
		announced bool
	}{{"an event came during the turn", true, true}, {"nothing came", false, false}} {
		t.Run(tt.name, func(t *testing.T) {
			h := poisonHost(t)
			item, err := lockNext(ctx, h.st, time.Now(), time.Minute)
			if err != nil || item == nil {
				t.Fatal(item, err)
			}
			if tt.raise {
				if err := h.Raise(ctx, "p1", "Approval", nil, false); err != nil {
					t.Fatal(err)
				}
			}
			select { // the announcement nobody could act on
			case <-h.orchestrationWork:
			default:
			}
			h.turn(ctx, item)
			if announced := len(h.orchestrationWork) == 1; announced != tt.announced {
				t.Fatalf("after the turn, the turn fetcher was woken: %v; want %v", announced, tt.announced)
			}
		})
	}
}
