package sandbox

import (
	"math/bits"
	"os"
	"slices"
	"sync"
)

// An instance started from a snapshot maps the snapshot's memory
// copy-on-write. A page the guest reads and later writes costs two faults,
// and the second must flush the read-only mapping from the TLB of every CPU
// that runs the process: an interrupt to each. In the hello benchmark those
// flushes took a fifth of all CPU time. But the instances of a module write
// much the same pages (the Go runtime's state, the top of its heap), so the
// snapshot learns them from the first instances that close, and each later
// instance has them copied in one call before it runs (MADV_POPULATE_WRITE):
// a write to a page not yet mapped needs no flush. Copying a page the guest
// would not have written costs a page of memory and no more.

// hotSamples is how many closing instances a snapshot learns its hot pages
// from.
const hotSamples = 4

// hotPages is the set of snapshot pages its instances write.
type hotPages struct {
	mu sync.Mutex
	// set has a bit per page of the snapshot's memory. It is never written
	// in place: prefault reads it after dropping mu, so learn replaces it.
	set     []uint64
	samples int
}

var osPageSize = uint64(os.Getpagesize())

// learn adds the pages an instance wrote to the set, while it learns.
func (h *hotPages) learn(written []uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.samples >= hotSamples {
		return
	}
	set := slices.Clone(written) // the caller goes on to use written
	for i := range min(len(set), len(h.set)) {
		set[i] |= h.set[i]
	}
	h.set = set
	h.samples++
}

// prefault copies the hot pages into mem, a new instance's memory mapped
// from the snapshot, in one call per run of them.
func (h *hotPages) prefault(mem []byte) {
	h.mu.Lock()
	set := h.set
	h.mu.Unlock()
	eachRun(set, uint64(len(mem)), func(start, end uint64) error {
		populateWrite(mem[start:end])
		return nil
	})
}

// eachRun calls fn with the byte range of each run of pages set in set,
// in order, up to limit bytes, and stops at its first error.
func eachRun(set []uint64, limit uint64, fn func(start, end uint64) error) error {
	n := min(uint64(len(set))*64, limit/osPageSize)
	for p := uint64(0); p < n; {
		w := set[p/64] >> (p % 64)
		if w == 0 {
			p = (p/64 + 1) * 64
			continue
		}
		if p += uint64(bits.TrailingZeros64(w)); p >= n {
			break
		}
		end := p
		for end < n && set[end/64]&(1<<(end%64)) != 0 {
			end++
		}
		if err := fn(p*osPageSize, end*osPageSize); err != nil {
			return err
		}
		p = end
	}
	return nil
}
