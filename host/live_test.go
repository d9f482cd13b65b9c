package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/sandbox"
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

// pages is a sandbox.Instance that reports its memory, and counts how
// often its pages were counted.
type pages struct {
	sandbox.Instance
	size, resident uint64
	counted        int
}

func (p *pages) MemorySize() uint64 { return p.size }
func (p *pages) Resident() uint64   { p.counted++; return p.resident }

// TestLiveMemoryCountsPagesSometimes: the cache counts a guest's pages on
// its first put, when its linear memory has grown, and every
// remeasureEvery turns, and otherwise reuses the last count.
func TestLiveMemoryCountsPagesSometimes(t *testing.T) {
	p := &pages{size: 4 << 20, resident: 100 << 10}
	l := &live{guest: &orchestrationGuest{wasmGuest: &wasmGuest{inst: p}}}
	want := func(counted int, resident uint64) {
		t.Helper()
		if got := l.memory(); p.counted != counted || got != resident+instanceOverhead {
			t.Fatalf("memory() = %d after %d counts of the pages; want %d after %d", got, p.counted, resident+instanceOverhead, counted)
		}
	}
	want(1, 100<<10)
	p.resident = 120 << 10
	for range remeasureEvery - 1 {
		want(1, 100<<10)
	}
	want(2, 120<<10)
	p.size, p.resident = 8<<20, 3<<20
	want(3, 3<<20)
	want(3, 3<<20)
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

// TestIdleInstancesHoldLittle: instances waiting for an event sit in the
// live cache, which counts for each the pages its guest wrote, wazero's
// share and its history: under 1 MiB, though each guest addresses several
// MiB of linear memory (the snapshot's pages, which it only reads, are
// shared). A bound of 2 MiB keeps as many as fit in it.
func TestIdleInstancesHoldLittle(t *testing.T) {
	const n = 20
	for _, tt := range []struct {
		name  string
		bound uint64
	}{{"the default bound", 0}, {"a bound of 2 MiB", 2 << 20}} {
		t.Run(tt.name, func(t *testing.T) {
			h := conformanceHost(t, Options{MaxLiveMemory: tt.bound})
			for i := range n {
				if _, err := h.Start(context.Background(), "WaitsForGo", nil, fmt.Sprint("idle-", i)); err != nil {
					t.Fatal(err)
				}
			}
			drive(t, h, conformanceNow, false)
			kept, memory := h.cache.size()
			if tt.bound == 0 {
				if kept != n {
					t.Fatalf("the cache keeps %d of the %d idle instances", kept, n)
				}
				l := h.cache.take("idle-0")
				defer l.close(context.Background())
				per := memory / n
				t.Logf("an idle instance holds %d KiB by the cache's count, with %d KiB of linear memory", per>>10, l.guest.inst.MemorySize()>>10)
				if per >= 1<<20 || per <= instanceOverhead || per >= l.guest.inst.MemorySize() {
					t.Fatalf("an idle instance holds %d bytes by the cache's count, with %d of linear memory; want under 1 MiB", per, l.guest.inst.MemorySize())
				}
				return
			}
			if memory > tt.bound || kept == 0 || kept == n {
				t.Fatalf("under a bound of %d bytes the cache keeps %d instances holding %d", tt.bound, kept, memory)
			}
		})
	}
}
