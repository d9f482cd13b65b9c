package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/logbuf"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// cutOffStore is a store this host is cut off from while cut is set: its
// lease extensions hang until their context ends, as a call over a network
// that drops every packet does.
type cutOffStore struct {
	store.Store
	cut atomic.Bool
}

func (s *cutOffStore) ExtendLease(ctx context.Context, w *store.ActivityWork, now time.Time, lease time.Duration) error {
	if s.cut.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.ExtendLease(ctx, w, now, lease)
}

// TestCutOffHostStopsItsAttemptBeforeItsLeaseEnds: a host cut off from
// its database while an activity attempt runs cannot extend its lease;
// it stops the attempt before the lease ends, recording nothing, rather
// than run it on beside the attempt of the worker that takes the task
// once the lease ends. (The attempt spins forever, under a deadline of an
// hour: only the lease stops it.)
func TestCutOffHostStopsItsAttemptBeforeItsLeaseEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sq, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &cutOffStore{Store: sq}
	const lease = 3 * time.Second
	logs := &logbuf.Buffer{}
	h, err := New(st, Options{CacheDir: TestCacheDir, Lease: lease, ActivityTimeout: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	wasm, err := guestbuild.Wasm("host/testdata/guests/spin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, "Wait", json.RawMessage(`"cut"`), "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RunTurns(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	w, err := leaseNext(ctx, st, now, lease)
	if err != nil || w == nil {
		t.Fatal(w, err)
	}
	st.cut.Store(true)
	done := make(chan struct{})
	go func() {
		h.complete(ctx, w, now.Add(lease))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the attempt ran on a minute after its lease (3s) ended, with the host cut off from its database")
	}
	if !strings.Contains(logs.String(), "activity attempt stopped: its lease could not be extended") {
		t.Errorf("the host did not say why it stopped the attempt; its log:\n%s", logs)
	}
	st.cut.Store(false)
	again, err := leaseNext(ctx, st, now.Add(lease), lease)
	if err != nil || again == nil || again.Attempt != 2 {
		t.Fatalf("the task after the lease ended: %+v, %v; want it free for its second delivery, nothing recorded", again, err)
	}
}
