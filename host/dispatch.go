package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/store"
)

// dispatch runs workers workers until ctx is done, fed by one fetcher:
// it takes as much work as there are idle workers, first what commits
// handed this host (hand), then with next, in one store write, and hands
// it out; when it got less than it asked for, it waits
// until woken or the store's next message is due, and when the store
// failed (or the fetcher panicked), for fetchRetry. Whatever makes work
// announces it on wake. Idle workers cost nothing: only the fetcher asks
// the store for work. Once ctx is done it waits for the workers to finish
// what they have.
func dispatch[W any](ctx context.Context, h *Host, what string, wake wakeup, hand *handoff[W], workers int, next func(max int) ([]*W, error), handle func(*W)) {
	work := make(chan *W, workers)
	done := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for w := range work {
				handle(w)
				done <- struct{}{}
			}
		})
	}
	defer wg.Wait()
	defer close(work)
	idle := workers
	// handedOnly says the fetcher was woken only by work handed over: it
	// takes that, and asks the store for nothing.
	handedOnly := false
	var due dueAt
	for ctx.Err() == nil {
		hand.setIdle(idle)
		if idle == 0 {
			select {
			case <-done:
				idle++
			case <-ctx.Done():
				return
			}
		}
		for len(done) > 0 {
			<-done
			idle++
		}
		handed := hand.take(idle, idle)
		for _, w := range handed {
			work <- w
		}
		if idle -= len(handed); idle == 0 {
			continue
		}
		if !handedOnly {
			items, err := fetch(h, what, idle, next)
			if err != nil {
				// A store that refuses leases for a disk that is full or
				// failing (a write of a start's, say, found it so) is
				// waited for as one whose commit failed.
				h.noteUnwritable(err)
				if ctx.Err() == nil && !errors.As(err, new(*guard.Panic)) {
					h.opts.Logger.Error("cannot fetch "+what+" work; trying again", "err", err, "in", fetchRetry)
				}
				select {
				case <-ctx.Done():
				case <-time.After(fetchRetry):
				}
				continue
			}
			for _, w := range items {
				work <- w
			}
			if idle -= len(items); idle == 0 {
				continue
			}
		}
		// Less than asked for: there is no more, for now.
		hand.setIdle(idle)
		handedOnly = h.idle(ctx, wake, hand.ready, &due, !handedOnly)
	}
}

// fetchRetry is how long a fetcher waits after the store failed to give
// it work, or it panicked, before it asks again.
const fetchRetry = time.Second

// fetch takes up to max items of work with next. A panic is an error: the
// fetcher serves every instance, so it carries on.
func fetch[W any](h *Host, what string, max int, next func(max int) ([]*W, error)) (items []*W, err error) {
	defer h.guard.Catch(guard.Fetch, func(p *guard.Panic) { items, err = nil, p }, "work", what)
	guard.MayPanic(guard.PointFetch, what)
	return next(max)
}

// dispatchOrchestrations runs turns until ctx is done.
func (h *Host) dispatchOrchestrations(ctx context.Context) {
	defer func() {
		// Instances handed over and not begun: their next start takes them
		// at once.
		for _, item := range h.turns.take(h.opts.OrchestrationWorkers, 0) {
			h.abandon(ctx, item.Instance.ID, item.LockToken)
		}
	}()
	dispatch(ctx, h, "orchestration", h.orchestrationWork, h.turns, h.opts.OrchestrationWorkers,
		func(max int) ([]*store.WorkItem, error) {
			if err := h.writableAgain(ctx); err != nil {
				return nil, err
			}
			return h.st.LockNextInstances(ctx, h.opts.Clock(), h.opts.Lease, max, h.reg.skipped())
		},
		func(item *store.WorkItem) { h.turn(ctx, item) })
}
