package host

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/store"
)

// fullStore is a store on a full disk until space is freed: its Ping says
// so, as a SQLite store's does once any write of it found the disk full.
type fullStore struct {
	quietStore
	full  atomic.Bool
	pings atomic.Int32
}

func (s *fullStore) Ping(context.Context) error {
	s.pings.Add(1)
	if s.full.Load() {
		return fmt.Errorf("sqlite: %w: writes fail until there is space on it", store.ErrFull)
	}
	return nil
}

// TestAFetchRefusedForAFullDiskWaitsForSpace: a store that refuses a
// fetch's lease for a full disk (a write the host did not make, a start's,
// found it full) makes the fetcher wait for space, asking the store's Ping
// each fetchRetry and fetching nothing, as a turn whose commit failed for
// it does; once there is space, it fetches again. A fetcher that took the
// refusal for a passing failure fetched every second instead, logging
// "cannot fetch" and never that it waited for the disk. Fake time.
func TestAFetchRefusedForAFullDiskWaitsForSpace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := &fullStore{}
		st.full.Store(true)
		h := &Host{st: st}
		if err := h.opts.validate(); err != nil {
			t.Fatal(err)
		}
		var fetches atomic.Int32
		next := func(int) ([]*int, error) {
			if err := h.writableAgain(context.Background()); err != nil {
				return nil, err
			}
			fetches.Add(1)
			if st.full.Load() {
				return nil, fmt.Errorf("sqlite: %w: writes fail until there is space on it", store.ErrFull)
			}
			return nil, nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go dispatch(ctx, h, "test", newWakeup(), newHandoff[int](), 1, next, func(*int) {})
		time.Sleep(5*fetchRetry + fetchRetry/2)
		if f, p := fetches.Load(), st.pings.Load(); f != 1 || p != 5 {
			t.Fatalf("in 5 retries on a full disk the fetcher fetched %d times and asked Ping %d times; want 1 fetch (refused) and 5 Pings", f, p)
		}
		st.full.Store(false)
		time.Sleep(fetchRetry)
		synctest.Wait()
		if f := fetches.Load(); f != 2 {
			t.Fatalf("once there was space the fetcher fetched %d times in all; want 2", f)
		}
	})
}
