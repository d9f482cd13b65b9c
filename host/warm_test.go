package host_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// recordingStore notes, in order, the modules read and the fetches that
// took work. Its store.Handoff is the SQLite store's.
type recordingStore struct {
	*sqlite.Store
	mu    sync.Mutex
	calls []string
}

func (s *recordingStore) note(call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

// count returns how many times call was noted.
func (s *recordingStore) count(call string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c == call {
			n++
		}
	}
	return n
}

func (s *recordingStore) GetModule(ctx context.Context, hash string) (store.Module, error) {
	s.note("GetModule")
	return s.Store.GetModule(ctx, hash)
}

func (s *recordingStore) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.WorkItem, error) {
	items, err := s.Store.LockNextInstances(ctx, now, lease, max, skip)
	if len(items) > 0 {
		s.note("LockNextInstances")
	} else {
		s.note("LockNextInstances found none")
	}
	return items, err
}

func (s *recordingStore) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	ws, err := s.Store.LockNextActivities(ctx, now, lease, max, skip)
	if len(ws) > 0 {
		s.note("LockNextActivities")
	} else {
		s.note("LockNextActivities found none")
	}
	return ws, err
}

func (s *recordingStore) NextVisibleAt(ctx context.Context, now time.Time) (time.Time, bool, error) {
	s.note("NextVisibleAt")
	return s.Store.NextVisibleAt(ctx, now)
}

// TestRestartedHostLoadsModulesBeforeTakingWork: a host that starts on a
// store with work waiting loads the work's modules before it takes any, so
// a kill during the load does not count as a delivery of work that never
// ran.
func TestRestartedHostLoadsModulesBeforeTakingWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	// An earlier host deployed the module and accepted a start, and stopped
	// before running it.
	earlier, err := host.New(st, host.Options{CacheDir: host.TestCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := earlier.Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := earlier.Start(ctx, "Greeting", json.RawMessage(`"again"`), "w1"); err != nil {
		t.Fatal(err)
	}
	earlier.Close()

	rec := &recordingStore{Store: st}
	h, err := host.New(rec, host.Options{CacheDir: host.TestCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	inst, err := h.Wait(waitCtx, "w1")
	stop()
	if runErr := <-done; err != nil || runErr != nil {
		t.Fatal(err, runErr)
	}
	if inst.Status != engine.StatusCompleted {
		t.Fatalf("w1 is %s, %+v; want Completed", inst.Status, inst.Failure)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	first := slices.IndexFunc(rec.calls, func(c string) bool { return strings.HasPrefix(c, "LockNext") })
	if got := slices.Index(rec.calls, "GetModule"); got < 0 || got > first {
		t.Fatalf("calls in order: %q; want the module read before any work is taken", rec.calls)
	}
}

func (s *recordingStore) GetInstance(ctx context.Context, id string) (store.Instance, error) {
	s.note("GetInstance")
	return s.Store.GetInstance(ctx, id)
}
