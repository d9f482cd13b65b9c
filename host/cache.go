package host

import (
	"container/list"
	"context"
	"sync"
)

// liveCache keeps at most max live instances holding at most maxMemory
// bytes between them, dropping the least recently used: an instance
// dropped is replayed from its history when it next runs. A dispatcher
// takes an instance out for the length of a turn, so an instance is never
// used by two turns or closed while in use.
type liveCache struct {
	mu        sync.Mutex
	max       int
	maxMemory uint64
	memory    uint64
	order     *list.List // of *cacheEntry, most recent at the front
	items     map[string]*list.Element
}

type cacheEntry struct {
	id     string
	l      *live
	memory uint64
}

func newLiveCache(max int, maxMemory uint64) *liveCache {
	return &liveCache{max: max, maxMemory: maxMemory, order: list.New(), items: map[string]*list.Element{}}
}

// take removes and returns the live instance for id, or nil.
func (c *liveCache) take(id string) *live {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[id]
	if !ok {
		return nil
	}
	return c.remove(e)
}

// drop closes the live instances kept for ids, if any: their instances
// finished, were purged, reset or moved, or are ahead of what the store
// holds.
func (c *liveCache) drop(ctx context.Context, ids ...string) {
	for _, id := range ids {
		if l := c.take(id); l != nil {
			l.close(ctx)
		}
	}
}

// remove drops an entry and returns its live instance. c.mu is held.
func (c *liveCache) remove(e *list.Element) *live {
	ce := e.Value.(*cacheEntry)
	c.order.Remove(e)
	delete(c.items, ce.id)
	c.memory -= ce.memory
	return ce.l
}

// put keeps l for id, closing the least recently used beyond the bounds
// (l itself, if it alone is over the memory bound). It replaces, and
// closes, one kept for id already: a turn that ran on a fresh instance
// while the one before it was still on its way back to the cache.
func (c *liveCache) put(ctx context.Context, id string, l *live) { c.keep(ctx, id, l, true) }

// putBack puts l, which a query took for id, back, unless a turn has put
// one for id meanwhile (one that ran on a fresh instance while the query
// held l): that one is as new as l or newer, and l is closed.
func (c *liveCache) putBack(ctx context.Context, id string, l *live) { c.keep(ctx, id, l, false) }

// keep keeps l for id as put does; when one is kept for id already, it
// replaces it if replace is set, else closes l.
func (c *liveCache) keep(ctx context.Context, id string, l *live, replace bool) {
	ce := &cacheEntry{id: id, l: l, memory: l.memory()}
	c.mu.Lock()
	var evicted []*live
	if e, ok := c.items[id]; ok {
		if !replace {
			c.mu.Unlock()
			l.close(ctx)
			return
		}
		evicted = append(evicted, c.remove(e))
	}
	c.items[id] = c.order.PushFront(ce)
	c.memory += ce.memory
	for c.order.Len() > c.max || c.memory > c.maxMemory {
		evicted = append(evicted, c.remove(c.order.Back()))
	}
	c.mu.Unlock()
	for _, l := range evicted {
		l.close(ctx)
	}
}

// size returns how many live instances c keeps, and the memory they hold.
func (c *liveCache) size() (int, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.memory
}

func (c *liveCache) closeAll(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.items {
		e.Value.(*cacheEntry).l.close(ctx)
	}
	c.items, c.order, c.memory = map[string]*list.Element{}, list.New(), 0
}
