package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/internal/procmem"
)

// TestLiveMemoryCountsWhatInstancesHold starts Greeting instances on each
// runtime and runs their first turn only, so that each waits in the live
// cache for its activity's result, and compares what the cache counts for
// them with what they cost the process: the growth of its proportional set
// size (a page shared by every instance, such as the module's data that
// each maps and only reads, counts once among them).
//
// Not parallel: it measures the growth of the process's proportional set
// size, which tests running beside it would change.
func TestLiveMemoryCountsWhatInstancesHold(t *testing.T) {
	const n = 100
	// tolerance is how far the count may be from the measure, as a
	// share of the measure.
	const tolerance = 0.25
	for _, rt := range []string{RuntimeWazero, RuntimeWasmtime} {
		t.Run(rt, func(t *testing.T) {
			h := newBareHostAt(t, filepath.Join(t.TempDir(), "durabox.db"), Options{Runtime: rt, Clock: func() time.Time { return conformanceNow }})
			deployGuest(t, h, "examples/wasm/hello", nil)
			start := func(id string) {
				t.Helper()
				if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"soak"`), id); err != nil {
					t.Fatal(err)
				}
			}
			// A first instance compiles the module and starts what the
			// runtime keeps for it.
			start("warm-up")
			runTurns(t, h, conformanceNow)
			before := pss(t)
			_, countedBefore := h.cache.size()
			for i := range n {
				start(fmt.Sprint("waits-", i))
			}
			runTurns(t, h, conformanceNow)
			measured := float64(pss(t)-before) / n
			kept, counted := h.cache.size()
			count := float64(counted-countedBefore) / n
			t.Logf("%d instances live; each costs the process %.0f KiB, the cache counts %.0f KiB", kept, measured/1024, count/1024)
			if kept != n+1 {
				t.Fatalf("the cache keeps %d instances; want %d", kept, n+1)
			}
			if math.Abs(count-measured) > tolerance*measured {
				t.Fatalf("the cache counts %.0f KiB for each waiting instance, which costs the process %.0f KiB; want within %.0f%%",
					count/1024, measured/1024, 100*tolerance)
			}
		})
	}
}

// runTurns runs the turns of h's instances at now until none has work,
// leaving their activities waiting, and reports whether it ran any.
func runTurns(t *testing.T, h *Host, now time.Time) bool {
	t.Helper()
	ran, err := h.RunTurns(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	return ran > 0
}

// pss is the process's proportional set size, in bytes, once the Go
// runtime and the C allocator have returned to the system what they can.
func pss(t *testing.T) int64 {
	t.Helper()
	m, err := procmem.Settled()
	if err != nil {
		t.Skipf("the process's memory needs Linux: %v", err)
	}
	return m.PSS
}
