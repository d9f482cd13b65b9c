package wasi

import (
	"context"
	"strings"
)

// A guest has no arguments: args_get writes nothing.
func argsSizesGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	return fault(putU32(m, uint32(a[0]), 0) && putU32(m, uint32(a[1]), 0))
}

func environSizesGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	block := e.environBlock()
	return fault(putU32(m, uint32(a[0]), uint32(len(e.environ))) && putU32(m, uint32(a[1]), uint32(len(block))))
}

// environGet writes the NUL-terminated variables at buf and a pointer to
// each at ptrs.
func environGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	ptrs, buf := uint32(a[0]), uint32(a[1])
	if !m.Write(buf, e.environBlock()) {
		return EFAULT
	}
	off := uint32(0)
	for i, kv := range e.environ {
		if !putU32(m, ptrs+uint32(4*i), buf+off) {
			return EFAULT
		}
		off += uint32(len(kv)) + 1
	}
	return ESUCCESS
}

// environBlock returns the environment as WASI lays it out: each entry
// NUL-terminated.
func (e *Env) environBlock() []byte {
	var sb strings.Builder
	for _, kv := range e.environ {
		sb.WriteString(kv)
		sb.WriteByte(0)
	}
	return []byte(sb.String())
}
