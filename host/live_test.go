package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/store"
)

// TestLiveCacheBoundsMemory keeps live instances within the memory bound,
// dropping the least recently used first, and the newest too when it alone
// is over the bound.
func TestLiveCacheBoundsMemory(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	p := &pages{size: 4 << 20, resident: 100 << 10}
	l := &live{guest: &orchestrationGuest{wasmGuest: &wasmGuest{inst: p}}}
	want := func(counted int, resident uint64) {
		t.Helper()
		if got := l.memory(); p.counted != counted || got != resident {
			t.Fatalf("memory() = %d after %d counts of the pages; want %d after %d", got, p.counted, resident, counted)
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

// TestLiveMemoryTakesTheFirstTurnsCount: a new instance, at its first
// turn, takes the count of the last instance of its module measured at
// its first turn, when its linear memory has that size, and counts its
// own pages otherwise; after that it counts as any instance does.
func TestLiveMemoryTakesTheFirstTurnsCount(t *testing.T) {
	t.Parallel()
	var first firstPages
	newLive := func(size, resident uint64) (*live, *pages) {
		p := &pages{size: size, resident: resident}
		return &live{guest: &orchestrationGuest{wasmGuest: &wasmGuest{inst: p}}, first: &first}, p
	}
	for _, step := range []struct {
		what           string
		size, resident uint64
		// turns is how many turns the instance runs; want is its count
		// after the last, and counted how often it counted its pages.
		turns   int
		want    uint64
		counted int
	}{
		{"the module's first instance", 4 << 20, 100 << 10, 1, 100 << 10, 1},
		{"a second instance at the same size", 4 << 20, 140 << 10, 1, 100 << 10, 0},
		{"a third, after remeasureEvery turns", 4 << 20, 140 << 10, remeasureEvery + 1, 140 << 10, 1},
		{"an instance whose memory grew in its first turn", 8 << 20, 3 << 20, 1, 3 << 20, 1},
		{"the next at that size", 8 << 20, 5 << 20, 1, 3 << 20, 0},
	} {
		l, p := newLive(step.size, step.resident)
		var got uint64
		for range step.turns {
			got = l.memory()
		}
		if got != step.want || p.counted != step.counted {
			t.Fatalf("%s: memory() = %d after %d counts of its pages; want %d after %d", step.what, got, p.counted, step.want, step.counted)
		}
	}
}

// TestLiveCacheReplacesAnInstanceKeptTwice: putting a second live instance
// for an id replaces the first, which no take can return any more, and the
// cache counts only the second.
func TestLiveCacheReplacesAnInstanceKeptTwice(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
				if per >= 1<<20 || per >= l.guest.inst.MemorySize() {
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

// commitHook is a store that calls after once a turn's commit is written,
// before CommitTurn returns: a test runs there what another worker could
// run between a commit and what follows it.
type commitHook struct {
	store.Store
	after func(store.TurnCommit)
}

func (s *commitHook) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	err := s.Store.CommitTurn(ctx, c)
	if after := s.after; err == nil && after != nil {
		s.after = nil
		after(c)
	}
	return err
}

// TestLiveCacheKeepsNoInstanceALaterTurnFinished forces the interleaving
// in which a turn's commit lets the instance's next turn run, on another
// worker, before the first turn is done with its live instance: the next
// turn finishes the instance. No copy of the finished instance may stay
// in the cache.
func TestLiveCacheKeepsNoInstanceALaterTurnFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := conformanceHost(t, Options{})
	startEach(t, h, "null", "WaitsForGo")
	drive(t, h, conformanceNow, false)
	if l := h.cache.take("WaitsForGo"); l == nil {
		t.Fatal("the instance waiting for go is not live")
	} else {
		h.cache.put(ctx, "WaitsForGo", l)
	}
	hook := &commitHook{Store: h.st}
	h.st = hook
	h.handoffs = nil // every commit goes through the hook
	hook.after = func(store.TurnCommit) {
		// The turn of "stray" is written; before it goes on, go comes,
		// and another worker runs the turn that finishes the instance.
		if err := h.Raise(ctx, "WaitsForGo", "go", json.RawMessage(`"went"`), false); err != nil {
			t.Fatal(err)
		}
		item, err := lockNext(ctx, h.st, conformanceNow, time.Minute)
		if err != nil || item == nil {
			t.Fatalf("the turn of go was not ready: %v", err)
		}
		h.turn(ctx, item)
	}
	if err := h.Raise(ctx, "WaitsForGo", "stray", nil, false); err != nil {
		t.Fatal(err)
	}
	item, err := lockNext(ctx, h.st, conformanceNow, time.Minute)
	if err != nil || item == nil {
		t.Fatalf("the turn of stray was not ready: %v", err)
	}
	h.turn(ctx, item)
	if hook.after != nil {
		t.Fatal("the turn of stray committed nothing")
	}
	inst, err := h.Instance(ctx, "WaitsForGo")
	if err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("the instance is %s (%v); want Completed", inst.Status, err)
	}
	if n, memory := h.cache.size(); n != 0 {
		t.Fatalf("the cache keeps %d instances (%d bytes) after the only one finished", n, memory)
	}
}

// TestLiveCacheDropsPurgedInstances: purging an instance, by id, by filter
// or by retention, drops whatever the cache keeps for it (a copy another
// host's turn made stale, when hosts share a database).
func TestLiveCacheDropsPurgedInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := conformanceNow
	h := newBareHostAt(t, filepath.Join(t.TempDir(), "durabox.db"), Options{Clock: func() time.Time { return now }, Retention: time.Hour})
	deployConformance(t, h, "v1")
	ids := []string{"by-id", "by-filter", "by-retention"}
	for _, id := range ids {
		if _, err := h.Start(ctx, "WaitsForGo", nil, id); err != nil {
			t.Fatal(err)
		}
	}
	drive(t, h, now, false)
	stale := map[string]*live{}
	for _, id := range ids {
		stale[id] = h.cache.take(id)
		if err := h.Raise(ctx, id, "go", json.RawMessage(`"went"`), false); err != nil {
			t.Fatal(err)
		}
	}
	drive(t, h, now, false)
	for _, id := range ids {
		if stale[id] == nil {
			t.Fatalf("%s was not live while it waited", id)
		}
		h.cache.put(ctx, id, stale[id])
	}
	if err := h.Purge(ctx, "by-id"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PurgeMatching(ctx, store.InstanceFilter{IDPrefix: "by-filter"}, false); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	if swept, err := h.Sweep(ctx); err != nil || swept.Instances != 1 {
		t.Fatalf("the sweep purged %d instances (%v); want 1", swept.Instances, err)
	}
	for _, id := range ids {
		if l := h.cache.take(id); l != nil {
			t.Errorf("the cache keeps %s after it was purged", id)
		}
	}
}

// TestLiveCachePutBackKeepsANewerInstance: an instance a query took goes
// back to the cache, unless a turn put one for its id meanwhile, which is
// as new or newer: then the query's is closed and the turn's stays.
func TestLiveCachePutBackKeepsANewerInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newLiveCache(100, 1<<30)
	queried := &live{execution: 1}
	c.putBack(ctx, "a", queried)
	if got := c.take("a"); got != queried {
		t.Fatalf("take returned %+v; want the instance put back", got)
	}
	turned := &live{execution: 1, turns: 1}
	c.put(ctx, "a", turned)
	c.putBack(ctx, "a", queried)
	if got := c.take("a"); got != turned || c.order.Len() != 0 || c.memory != 0 {
		t.Fatalf("take returned %+v, the cache still holds %d; want the turn's instance, alone", got, c.order.Len())
	}
}
