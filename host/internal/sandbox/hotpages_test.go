package sandbox

import (
	"sync"
	"testing"
)

// Instances close (learn) while others start (prefault) at once: the set a
// starting instance reads is never written under it. go test -race fails
// this test if it is.
func TestHotPagesLearnWhilePrefaulting(t *testing.T) {
	t.Parallel()
	const pages = 256
	mem := make([]byte, pages*osPageSize)
	var h hotPages
	var wg sync.WaitGroup
	for i := range hotSamples {
		wg.Go(func() {
			written := make([]uint64, pages/64)
			written[i%len(written)] = 1 << i
			h.learn(written)
		})
		wg.Go(func() { h.prefault(mem) })
	}
	wg.Wait()
	var got uint64
	for _, w := range h.set {
		got |= w
	}
	if h.samples != hotSamples || got != 1<<hotSamples-1 {
		t.Errorf("learned %d samples, pages %b; want %d samples, pages %b", h.samples, got, hotSamples, 1<<hotSamples-1)
	}
}
