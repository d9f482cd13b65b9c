package wasi

import (
	"bytes"
	"context"
	"testing"
)

// What a query draws and reads between Aside and its restore leaves no
// trace the next step sees: the random stream and the clocks go on as if
// the query had not run.
func TestAsideLeavesNoTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	next := func(e *Env) (random []byte, wall, mono uint64) {
		m := make(memory, 48)
		if call(t, ctx, e, m, "random_get", 16, 32) != ESUCCESS || call(t, ctx, e, m, "clock_time_get", clockRealtime, 0, 0) != ESUCCESS ||
			call(t, ctx, e, m, "clock_time_get", clockMonotonic, 0, 8) != ESUCCESS {
			t.Fatal("a call failed")
		}
		return m[16:], u64(m, 0), u64(m, 8)
	}
	plain, queried := deterministic(), deterministic()
	for _, e := range []*Env{plain, queried} {
		e.SetTime(5_000)
		next(e)
	}
	restore := queried.Aside()
	queried.SetTime(9_000)
	next(queried)
	restore()
	for _, e := range []*Env{plain, queried} {
		e.SetTime(6_000)
	}
	r1, w1, m1 := next(plain)
	r2, w2, m2 := next(queried)
	if !bytes.Equal(r1, r2) || w1 != w2 || m1 != m2 {
		t.Fatalf("after a query aside: random %x, clocks %d, %d; without: %x, %d, %d", r2, w2, m2, r1, w1, m1)
	}
}
