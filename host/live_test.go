package host

import (
	"context"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
)

// TestLiveCacheBoundsMemory keeps live instances within the memory bound,
// dropping the least recently used first, and the newest too when it alone
// is over the bound.
func TestLiveCacheBoundsMemory(t *testing.T) {
	withHistory := func(bytes int) *live {
		l := &live{}
		l.extend([]engine.Event{{Kind: engine.ActivityCompleted, Result: []byte(strings.Repeat("x", bytes))}})
		return l
	}
	unit := withHistory(1000).memory()
	c := newLiveCache(100, 3*unit)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		c.put(ctx, id, withHistory(1000))
	}
	if c.take("b") == nil {
		t.Fatal("b was dropped while the cache was within its bounds")
	}
	c.put(ctx, "b", withHistory(1000))
	c.put(ctx, "d", withHistory(1000))
	if c.take("a") != nil {
		t.Fatal("a, the least recently used, was kept past the memory bound")
	}
	for _, id := range []string{"b", "c", "d"} {
		if l := c.take(id); l == nil {
			t.Fatalf("%s was dropped, though it was more recent than a", id)
		} else {
			c.put(ctx, id, l)
		}
	}
	c.put(ctx, "huge", withHistory(10000))
	if c.take("huge") != nil || c.memory > c.maxMemory {
		t.Fatalf("an instance bigger than the whole bound was kept; %d bytes held, bound %d", c.memory, c.maxMemory)
	}
}

// TestLiveCacheReplacesAnInstanceKeptTwice: putting a second live instance
// for an id replaces the first, which no take can return any more, and the
// cache counts only the second.
func TestLiveCacheReplacesAnInstanceKeptTwice(t *testing.T) {
	ctx := context.Background()
	c := newLiveCache(100, 1<<30)
	first, second := &live{execution: 1}, &live{execution: 2}
	c.put(ctx, "a", first)
	c.put(ctx, "a", second)
	if c.order.Len() != 1 || len(c.items) != 1 {
		t.Fatalf("the cache holds %d entries (%d by id) after two puts for one id; want 1", c.order.Len(), len(c.items))
	}
	if got := c.take("a"); got != second {
		t.Fatalf("take returned %+v; want the instance put last", got)
	}
	if c.take("a") != nil || c.memory != 0 {
		t.Fatalf("after taking the one instance of a, the cache still has one, or counts %d bytes", c.memory)
	}
}
