package host

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestActivityPoolClosesIdleInstances: three activities at once leave three
// instances in the pool; while one at a time runs, the one put back last
// serves, and the other two are closed once idle for activityIdle.
func TestActivityPoolClosesIdleInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := conformanceNow
	h := newBareHostAt(t, filepath.Join(t.TempDir(), "durabox.db"), Options{Clock: func() time.Time { return now }})
	hash := deployGuest(t, h, "examples/wasm/hello", nil)[0]
	var burst []*wasmGuest
	for range 3 {
		g, err := h.pool.get(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		burst = append(burst, g)
	}
	for _, g := range burst {
		h.pool.put(ctx, hash, g)
	}
	one := func(after time.Duration) int {
		t.Helper()
		now = now.Add(after)
		g, err := h.pool.get(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		h.pool.put(ctx, hash, g)
		return len(h.pool.idle[hash])
	}
	if n := one(activityIdle / 2); n != 3 {
		t.Fatalf("the pool keeps %d instances; want the 3 of the burst, none idle for %s yet", n, activityIdle)
	}
	if n := one(activityIdle / 2); n != 1 {
		t.Fatalf("the pool keeps %d instances once two were idle for %s; want 1", n, activityIdle)
	}
}
