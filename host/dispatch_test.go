package host

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/store"
)

// quietStore is a store with no timers due, for the fetcher's idle wait.
type quietStore struct{ store.Store }

func (quietStore) NextVisibleAt(context.Context, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// TestFetcherLooksAgainWhenATurnEnds: work that appears while a turn runs,
// with no notification (a message for the instance the turn holds), is
// taken as soon as the turn ends, not when the idle wait times out. The
// test runs in a bubble of fake time, which moves only when every
// goroutine waits: the work must be done before any time has passed.
func TestFetcherLooksAgainWhenATurnEnds(t *testing.T) {
	for _, again := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			h := &Host{st: quietStore{}, opts: Options{}}
			if err := h.opts.validate(); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			queue := []string{"first"}
			next := func(max int) ([]*string, error) {
				mu.Lock()
				defer mu.Unlock()
				var out []*string
				for len(queue) > 0 && len(out) < max {
					out = append(out, &queue[0])
					queue = queue[1:]
				}
				return out, nil
			}
			release := make(chan struct{})
			handled := make(chan string, 2)
			handle := func(w *string) {
				if *w == "first" {
					<-release
				}
				handled <- *w
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go dispatch(ctx, h, "test", newWakeup(), 2, again, next, handle)
			synctest.Wait() // "first" runs; the fetcher found nothing else and waits
			start := time.Now()
			mu.Lock()
			queue = append(queue, "left behind")
			mu.Unlock()
			close(release)
			<-handled
			if got := <-handled; got != "left behind" {
				t.Fatalf("handled %q", got)
			}
			if waited := time.Since(start); (waited == 0) != again {
				t.Fatalf("with again %v, the work left behind was taken after %s", again, waited)
			}
		})
	}
}
