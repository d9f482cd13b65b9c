package sandbox

import (
	"encoding/binary"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// mmapFixed maps f's first len(at) bytes private (copy-on-write) and
// read-write over at, which must be a mapping of the process.
func mmapFixed(at []byte, f *os.File) error {
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(at)))
	r, _, errno := syscall.Syscall6(syscall.SYS_MMAP, addr, uintptr(len(at)),
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_FIXED, f.Fd(), 0)
	if errno != 0 {
		return errno
	}
	if r != addr {
		// Cannot happen with MAP_FIXED.
		syscall.Syscall(syscall.SYS_MUNMAP, r, uintptr(len(at)), 0)
		return syscall.EINVAL
	}
	return nil
}

// writtenPages returns a bit per page of mem, a private mapping of a file
// or an anonymous one, set for the pages the process has written (which
// are copies of its own now), from /proc/self/pagemap.
func writtenPages(mem []byte) ([]uint64, error) {
	f, err := pagemap()
	if err != nil {
		return nil, err
	}
	n := uint64(len(mem)) / osPageSize
	entries := make([]byte, n*8)
	first := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))) / osPageSize
	if _, err := f.ReadAt(entries, int64(first*8)); err != nil {
		return nil, err
	}
	set := make([]uint64, (n+63)/64)
	for p := range n {
		if written(binary.LittleEndian.Uint64(entries[p*8:])) {
			set[p/64] |= 1 << (p % 64)
		}
	}
	return set, nil
}

// written reports whether a page whose /proc/self/pagemap entry is e was
// written: it is present and not a page of a file (bit 63 set, bit 61
// clear), or it is in swap (bit 62), where only a page the process wrote
// can be. A written page the system swapped out is still the instance's
// own: missed, it would not be reset when the instance is reused, and the
// next orchestration on it would see the last one's data.
func written(e uint64) bool {
	const present, swapped, file = 1 << 63, 1 << 62, 1 << 61
	return e&swapped != 0 || e&present != 0 && e&file == 0
}

// pagemap is /proc/self/pagemap, opened once and read with pread from any
// goroutine.
var pagemap = sync.OnceValues(func() (*os.File, error) { return os.Open("/proc/self/pagemap") })

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// populateWrite faults mem in for writing, before anything reads it. On an
// older kernel it does nothing, and the pages fault in as they are used.
func populateWrite(mem []byte) {
	syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(unsafe.SliceData(mem))), uintptr(len(mem)), madvPopulateWrite)
}
