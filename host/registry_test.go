package host

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
)

// countingStore counts GetModule calls.
type countingStore struct {
	store.Store
	gets atomic.Int32
}

func (s *countingStore) GetModule(ctx context.Context, hash string) (store.Module, error) {
	s.gets.Add(1)
	return s.Store.GetModule(ctx, hash)
}

// TestModuleLoadedOnceForConcurrentCallers: workers that all need a module
// at once, as after a restart, wait for one load instead of each compiling
// it.
func TestModuleLoadedOnceForConcurrentCallers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newBareHost(t)
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Deploy(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: h.st}
	reg := newRegistry(h.rt, st, h.opts, h.guard) // a restarted host's registry: nothing compiled yet
	defer reg.close(ctx)
	const callers = 8
	got := make([]*module, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			m, err := reg.module(ctx, info.Hash)
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	if n := st.gets.Load(); n != 1 {
		t.Errorf("the module was read from the store %d times for %d callers at once; want once", n, callers)
	}
	for i, m := range got {
		if m != got[0] {
			t.Errorf("caller %d got another compiled module than caller 0", i)
		}
	}
}
