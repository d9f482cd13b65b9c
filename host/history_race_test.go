package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// racingStore answers the first read of a history as a read made just
// before the instance was created does: not found.
type racingStore struct {
	store.Store
	raced bool
}

func (s *racingStore) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	if !s.raced {
		s.raced = true
		return nil, store.ErrNotFound
	}
	return s.Store.History(ctx, id, execution)
}

// An instance created between the host's read of its history and its read
// of the instance has a current execution: History returns it, not "no
// execution 0" (a test polling a child's history as the child was created
// saw that).
func TestHistoryOfAnInstanceCreatedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	racing := &racingStore{Store: st}
	h, err := New(racing, Options{CacheDir: TestCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, "Greeting", nil, "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.History(ctx, "new"); err != nil || !racing.raced {
		t.Fatalf("history of an instance created between the reads: %v (raced: %v); want its history", err, racing.raced)
	}
}
