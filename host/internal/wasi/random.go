package wasi

import (
	"context"
	crand "crypto/rand"
)

// randomGet fills the buffer a chunk at a time, so that a guest cannot make
// the host allocate more than a chunk. A deterministic stream gives the same
// bytes whatever the chunks.
func randomGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	addr, n := uint32(a[0]), uint32(a[1])
	if _, ok := m.Read(addr, n); !ok {
		return EFAULT
	}
	var chunk [256]byte
	for n > 0 {
		b := chunk[:min(n, uint32(len(chunk)))]
		e.fillRandom(b)
		m.Write(addr, b)
		addr += uint32(len(b))
		n -= uint32(len(b))
	}
	return ESUCCESS
}

func (e *Env) fillRandom(b []byte) {
	if e.deterministic {
		e.rand.Read(b)
		return
	}
	crand.Read(b)
}
