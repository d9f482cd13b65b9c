package host

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/durabox/durabox/host/api"
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
	var st *countingStore
	reg, hash := restartedRegistry(t, func(s store.Store) store.Modules { st = &countingStore{Store: s}; return st })
	defer reg.close(ctx)
	const callers = 8
	got := make([]*module, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			m, err := reg.module(ctx, hash)
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

// gatedStore holds GetModule until release is closed, and says when one
// has begun.
type gatedStore struct {
	store.Store
	began, release chan struct{}
}

func (s *gatedStore) GetModule(ctx context.Context, hash string) (store.Module, error) {
	close(s.began)
	<-s.release
	return s.Store.GetModule(ctx, hash)
}

// TestModuleLoadOutlivesTheCallerThatBeganIt: the caller whose request
// began a load goes away (its client timed out); the callers waiting for
// the same load get the module, not that caller's "context canceled", and
// the module is kept. A load asked for once the registry closes is
// refused as the host stopping.
func TestModuleLoadOutlivesTheCallerThatBeganIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var st *gatedStore
	reg, hash := restartedRegistry(t, func(s store.Store) store.Modules {
		st = &gatedStore{Store: s, began: make(chan struct{}), release: make(chan struct{})}
		return st
	})
	first, leave := context.WithCancel(ctx)
	firstErr := make(chan error, 1)
	go func() {
		_, err := reg.module(first, hash)
		firstErr <- err
	}()
	<-st.began
	waiter := make(chan error, 1)
	go func() {
		m, err := reg.module(ctx, hash)
		if err == nil && m == nil {
			err = errors.New("no module and no error")
		}
		waiter <- err
	}()
	leave()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that went away got %v; want its own context.Canceled", err)
	}
	close(st.release)
	if err := <-waiter; err != nil {
		t.Errorf("a caller waiting for the load got %v; want the module", err)
	}
	if reg.cached(hash) == nil {
		t.Error("the module was not kept after its first caller went away")
	}
	reg.close(ctx)
	if _, err := reg.module(ctx, "0000"); !errors.Is(err, api.ErrNotReady) {
		t.Errorf("a load after close got %v; want api.ErrNotReady", err)
	}
}

// restartedRegistry deploys the hello module on a host, and returns a
// registry of that host's as a restarted host has it (nothing compiled
// yet), reading modules through what wrap makes of the host's store, and
// the module's hash.
func restartedRegistry(t *testing.T, wrap func(store.Store) store.Modules) (*registry, string) {
	t.Helper()
	h := newBareHost(t)
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return newRegistry(h.rt, wrap(h.st), h.opts, h.guard), info.Hash
}
