package sandbox

import (
	"sync"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
)

// A new instance costs wazero's instantiation (building a function table of
// tens of thousands of entries for a Go module: about 0.4 ms) and the faults
// of its first writes, and an orchestration needs one for every new
// instance. So an instance started from a snapshot that closes healthy is
// not thrown away: it is reset to the snapshot and kept for the next one.
// The reset is exact. The pages the instance wrote are the private ones of
// its mapping of the snapshot (/proc/self/pagemap tells which); they get the
// snapshot's bytes back, and the pages it never wrote are still the
// snapshot's own. Every mutable global gets its snapshot value (all but the
// yield budget, which the guest cannot see). The tables hold what
// instantiation put in them unless the code changes them, and a module whose
// code can is never reset. A memory that grew past the snapshot's size
// cannot shrink, so such an instance is closed instead; so is one that
// failed, whose state is undefined, and every one where the system does not
// tell which pages were written.

// The same holds on wasmtime, where a new instance costs a store of its
// own and an instantiation (about as much), and its instances are reset
// the same way.

// maxIdle bounds the reset instances a module keeps. Each instance in
// flight holds one (a hello holds its own while its activity runs), so a
// pool smaller than the load closes what it cannot keep and makes it
// again for the next starts: at 64 hellos in flight through the API, 96
// in place of 32 made a hello cost 9% less CPU (BENCHMARKS.md), for some
// 10 MiB more kept after the burst, about 0.2 MiB an instance.
const maxIdle = 96

// reopener is a runtime's instance, which a new user reopens.
type reopener[T any] interface {
	// reopen returns a new handle on the instance, answering to env: a
	// stale reference to its last user's handle cannot reach it.
	reopen(env *wasi.Env) T
}

// idlePool holds a module's instances reset to its snapshot, T being a
// runtime's instance.
type idlePool[T reopener[T]] struct {
	mu   sync.Mutex
	idle []T
	// closed is set once the module closes.
	closed bool
}

// take returns a reset instance, reopened for env, if there is one.
func (p *idlePool[T]) take(env *wasi.Env) (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var inst T
	n := len(p.idle)
	if n == 0 {
		return inst, false
	}
	inst = p.idle[n-1]
	p.idle = p.idle[:n-1]
	return inst.reopen(env), true
}

// wants reports whether the pool keeps another reset instance.
func (p *idlePool[T]) wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && len(p.idle) < maxIdle
}

// close empties the pool and keeps no more; it returns the instances it
// held, for the caller to close.
func (p *idlePool[T]) close() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	idle := p.idle
	p.idle, p.closed = nil, true
	return idle
}

// recycle resets inst, an instance that started from snapshot s (whose
// module l describes) and has not failed, and keeps it in p for a later
// Instantiate. mem is its linear memory; setGlobals sets its mutable
// globals, in Layout.Globals' order. While s learns its hot pages, it
// learns them from inst. It reports false when inst cannot be reset or is
// not wanted, and the caller closes it.
func recycle[T reopener[T]](p *idlePool[T], inst T, s *snapshot, l *wasmrewrite.Layout, mem []byte, setGlobals func([]uint64) error) bool {
	size := uint64(s.pages) * pageSize
	written, _ := writtenPages(mem[:min(uint64(len(mem)), size)])
	if written == nil {
		return false
	}
	s.hot.learn(written)
	if l.ChangesTables || uint64(len(mem)) != size || !p.wants() {
		return false
	}
	if err := s.memory.restore(mem, written); err != nil {
		return false
	}
	if err := setGlobals(s.globals); err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdle {
		return false
	}
	p.idle = append(p.idle, inst)
	return true
}
