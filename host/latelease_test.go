package host

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestNoAttemptAfterItsLeaseEnded: a host held up between leasing an
// activity task and starting its attempt (by a database that was down, for
// one) past the lease's end starts no attempt: the task is another
// worker's by then. Within its lease, the same task runs and is recorded.
func TestNoAttemptAfterItsLeaseEnded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	h, set := clockedHost(t, t0, "examples/wasm/hello")
	if _, err := h.Start(ctx, "Greeting", json.RawMessage(`"world"`), "p1"); err != nil {
		t.Fatal(err)
	}
	item, err := lockNext(ctx, h.st, t0, time.Minute)
	if err != nil || item == nil {
		t.Fatal(item, err)
	}
	h.turn(ctx, item) // schedules SayHello
	const lease = 10 * time.Second
	w, err := leaseNext(ctx, h.st, t0, lease)
	if err != nil || w == nil {
		t.Fatal(w, err)
	}
	// completed runs the instance's turn, if it has one to run, and
	// reports whether its history holds the activity's outcome.
	completed := func() bool {
		item, err := lockNext(ctx, h.st, h.opts.Clock(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if item != nil {
			h.turn(ctx, item)
		}
		history, err := h.History(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range history {
			if e.Kind == engine.ActivityCompleted {
				return true
			}
		}
		return false
	}

	set(t0.Add(lease + time.Second))
	h.complete(ctx, w, t0.Add(lease))
	if completed() {
		t.Fatal("an attempt started a second after its lease ended, and its outcome was recorded")
	}
	again, err := leaseNext(ctx, h.st, t0.Add(lease+time.Second), lease)
	if err != nil || again == nil || again.Attempt != 2 {
		t.Fatalf("the task's next delivery: %+v, %v; want delivery 2", again, err)
	}
	h.complete(ctx, again, t0.Add(2*lease+time.Second))
	if !completed() {
		t.Fatal("an attempt started within its lease was not recorded")
	}
}

// clockedHost is a bare host on a fake clock, at t0 until set moves it
// (set returns the time it was given), with the module built from guest
// deployed.
func clockedHost(t *testing.T, t0 time.Time, guest string) (h *Host, set func(time.Time) time.Time) {
	t.Helper()
	var clock atomic.Int64
	set = func(at time.Time) time.Time { clock.Store(at.UnixNano()); return at }
	set(t0)
	h = newBareHostWith(t, Options{Clock: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	wasm, err := guestbuild.Wasm(guest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Deploy(context.Background(), wasm); err != nil {
		t.Fatal(err)
	}
	return h, set
}
