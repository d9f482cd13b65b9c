package wasi

import (
	"encoding/binary"
	"math"
)

// Memory is the guest's linear memory, as a runtime exposes it.
type Memory interface {
	// Read returns n bytes at addr (possibly aliasing memory), or false if
	// they are out of range.
	Read(addr, n uint32) ([]byte, bool)
	// Write copies b to addr, or returns false if it is out of range.
	Write(addr uint32, b []byte) bool
}

func putU32(m Memory, addr uint32, v uint32) bool {
	return m.Write(addr, binary.LittleEndian.AppendUint32(nil, v))
}

func putU64(m Memory, addr uint32, v uint64) bool {
	return m.Write(addr, binary.LittleEndian.AppendUint64(nil, v))
}

// readArray reads count elements of size bytes at addr, or returns false if
// they are out of range (including a count so large that the length does
// not fit in 32 bits).
func readArray(m Memory, addr, count, size uint32) ([]byte, bool) {
	n := uint64(count) * uint64(size)
	if n > math.MaxUint32 {
		return nil, false
	}
	return m.Read(addr, uint32(n))
}

// fault is the errno of a function whose only possible failure is an address
// outside memory.
func fault(written bool) Errno {
	if written {
		return ESUCCESS
	}
	return EFAULT
}
