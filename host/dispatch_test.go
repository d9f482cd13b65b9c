package host

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/store"
)

// quietStore is a store with nothing due later, for the fetcher's idle
// wait.
type quietStore struct{ store.Store }

func (quietStore) NextVisibleAt(context.Context, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// TestFetcherTakesWorkForIdleWorkers: the fetcher asks for as much work as
// there are idle workers, asks nothing while all are busy, and asks again
// as soon as one is free while work may be left; work announced on wake is
// taken at once. It runs in a bubble of fake time, which moves only when
// every goroutine waits, so "at once" means before any time has passed.
func TestFetcherTakesWorkForIdleWorkers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := &Host{st: quietStore{}}
		if err := h.opts.validate(); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		queue := []int{1, 2, 3, 4}
		var asked []int
		next := func(max int) ([]*int, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, max)
			var out []*int
			for len(queue) > 0 && len(out) < max {
				out = append(out, &queue[0])
				queue = queue[1:]
			}
			return out, nil
		}
		release := make(chan struct{})
		handled := make(chan int, 8)
		handle := func(w *int) {
			<-release
			handled <- *w
		}
		wake := newWakeup()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		go dispatch(ctx, h, "test", wake, newHandoff[int](), 3, next, handle)
		synctest.Wait() // three workers busy with 1, 2, 3; the fetcher waits for one
		release <- struct{}{}
		<-handled
		synctest.Wait() // the free worker took 4; nothing is left
		mu.Lock()
		queue = append(queue, 5)
		mu.Unlock()
		wake.Notify()
		close(release)
		for range 4 {
			<-handled
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		// 3 for the three idle workers, 1 for the one that came free, then
		// as many as were free each time (which depends on the order the
		// workers finished in), never 0 (a poll while all were busy) and
		// never more than 3.
		if len(asked) < 3 || asked[0] != 3 || asked[1] != 1 || slices.Contains(asked, 0) {
			t.Fatalf("the fetcher asked for %v; want 3 for three idle workers, then 1 for the one that came free", asked)
		}
		if slices.Max(asked) > 3 {
			t.Fatalf("the fetcher asked for %v; never more than the 3 workers", asked)
		}
		if len(queue) != 0 || time.Since(start) != 0 {
			t.Fatalf("%d left in the queue, %s of fake time passed; want everything taken at once", len(queue), time.Since(start))
		}
	})
}
