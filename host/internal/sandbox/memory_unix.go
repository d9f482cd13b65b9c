//go:build unix

package sandbox

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs each instance's linear memory with its own mapping:
// the whole limit is reserved as address space up front (not memory), and
// growing only makes more of it accessible. So growth never copies (wazero's
// default allocator copies the whole memory on every grow, which makes a
// guest that allocates a lot slow down quadratically), and closing an
// instance returns its pages to the system at once, outside Go's heap.
var mmapAllocator experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return &mmapMemory{reserved: b}
})

type mmapMemory struct {
	reserved []byte
	// size is how much of reserved is accessible.
	size uint64
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.reserved)) {
		return nil
	}
	if size > m.size {
		if err := syscall.Mprotect(m.reserved[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return m.reserved[:size:size]
}

func (m *mmapMemory) Free() {
	if m.reserved != nil {
		syscall.Munmap(m.reserved)
		m.reserved = nil
	}
}
