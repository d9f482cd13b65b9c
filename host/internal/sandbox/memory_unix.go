//go:build unix

package sandbox

import (
	"fmt"
	"os"
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
	m, _ := reserve(max)
	if m == nil {
		return nil
	}
	return m
})

// reserve reserves max bytes of address space, none of it accessible.
func reserve(max uint64) (*mmapMemory, error) {
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	return &mmapMemory{reserved: b}, nil
}

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

// image is a snapshot's memory, kept in an unlinked temporary file that
// instances map copy-on-write: a page of it costs an instance nothing until
// the instance writes to it, and then one page. (The pages are the file's
// page cache, shared by every instance; the file is written once.)
type image struct {
	f    *os.File
	size uint64
	// view maps the file read-only, to restore pages from (recycle.go).
	view []byte
}

func newImage(b []byte) (*image, error) {
	f, err := os.CreateTemp("", "durabox-snapshot-*")
	if err != nil {
		return nil, fmt.Errorf("sandbox: snapshot file: %w", err)
	}
	os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: snapshot file: %w", err)
	}
	im := &image{f: f, size: uint64(len(b))}
	if len(b) > 0 {
		if im.view, err = syscall.Mmap(int(f.Fd()), 0, len(b), syscall.PROT_READ, syscall.MAP_SHARED); err != nil {
			f.Close()
			return nil, fmt.Errorf("sandbox: snapshot file: %w", err)
		}
	}
	return im, nil
}

// allocator returns an allocator for one instance whose memory starts as
// the image: it reserves the limit like mmapAllocator and maps the image
// over its first bytes, which are then accessible. It sets *mapped when it
// did; if it could not, the memory starts zeroed like any other, and the
// caller copies the image in (copyTo).
func (im *image) allocator(mapped *bool) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		m, err := reserve(max)
		if err != nil {
			return nil
		}
		if im.size <= max && im.mapOnto(m.reserved[:im.size]) {
			m.size = im.size
			*mapped = true
		}
		return m
	})
}

// mapOnto maps the image copy-on-write over the start of mem, an
// instance's memory (a mapping of the process at least as large), in
// place (MAP_FIXED), and reports whether it did. If it could not, mem is
// as it was, and the caller copies the image in (copyTo).
func (im *image) mapOnto(mem []byte) bool {
	return im.size > 0 && im.size <= uint64(len(mem)) && mmapFixed(mem[:im.size], im.f) == nil
}

// copyTo copies the image into dst, the start of an instance's memory.
func (im *image) copyTo(dst []byte) error {
	_, err := im.f.ReadAt(dst[:im.size], 0)
	return err
}

// restore copies the pages set in pages (a bit per page) from the image
// into mem, an instance's memory.
func (im *image) restore(mem []byte, pages []uint64) error {
	return eachRun(pages, min(uint64(len(mem)), im.size), func(start, end uint64) error {
		copy(mem[start:end], im.view[start:end])
		return nil
	})
}

func (im *image) Close() error {
	if im.view != nil {
		syscall.Munmap(im.view)
		im.view = nil
	}
	return im.f.Close()
}
