package host

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// TestBatchRate: a batch at 2 instances a second, run pass by pass on a
// fake clock, takes its first instance at once, and each next one only
// once the clock has moved on half a second since: never two in one
// pass, however long it waited (a burst of one), and each pass says when
// the next is due. It completes in the pass that takes its last.
func TestBatchRate(t *testing.T) {
	t.Parallel()
	now := conformanceNow
	h := newBareHostWith(t, Options{Clock: func() time.Time { return now }})
	deployGuest(t, h, "host/testdata/guests/attributes", nil)
	ctx := context.Background()
	for i := range 4 {
		if _, err := h.Start(ctx, "Order", json.RawMessage(`{"customer": "c-1"}`), fmt.Sprintf("o%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.StartBatch(ctx, store.InstanceFilter{Name: "Order"}, "name=Order", api.BatchRequest{Action: api.BatchCancel, Reason: "r", Rate: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := newBatchRunner(h)
	step := func(at time.Duration, wantDone int64, wantNext time.Duration) {
		t.Helper()
		now = conformanceNow.Add(at)
		next, err := r.pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Batch(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Done != wantDone {
			t.Fatalf("at +%s: %d done; want %d", at, got.Done, wantDone)
		}
		if want := conformanceNow.Add(wantNext); wantNext >= 0 && !next.Equal(want) {
			t.Fatalf("at +%s: the next is due at %s; want +%s", at, next.Format(time.RFC3339Nano), wantNext)
		}
		if wantNext < 0 && !next.IsZero() {
			t.Fatalf("at +%s: the next is due at %s; want none (the batch ended)", at, next.Format(time.RFC3339Nano))
		}
	}
	step(0, 1, 500*time.Millisecond)
	step(0, 1, 500*time.Millisecond)
	step(499*time.Millisecond, 1, 500*time.Millisecond)
	step(500*time.Millisecond, 2, time.Second)
	step(10*time.Second, 3, 10*time.Second+500*time.Millisecond)
	step(10*time.Second, 3, 10*time.Second+500*time.Millisecond)
	step(10*time.Second+500*time.Millisecond, 4, -1)
	if got, _ := h.Batch(ctx, b.ID); got.State != string(store.BatchCompleted) || got.LastInstance != "o3" {
		t.Fatalf("the batch at its end: %+v; want completed at o3", got)
	}
}
