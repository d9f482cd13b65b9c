package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
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
// are copies of its own now). It asks the kernel with PAGEMAP_SCAN, which
// answers in ranges of pages (Linux 6.7 and later; eight times faster
// than reading an entry for every page, for the 32 MiB of a Go guest),
// and else reads /proc/self/pagemap.
func writtenPages(mem []byte) ([]uint64, error) {
	f, err := pagemap()
	if err != nil {
		return nil, err
	}
	if !noPagemapScan.Load() {
		set, err := scanWritten(f, mem)
		if err == nil {
			return set, nil
		}
		if !errors.Is(err, syscall.ENOTTY) && !errors.Is(err, syscall.EINVAL) {
			return nil, err
		}
		noPagemapScan.Store(true) // a kernel before 6.7
	}
	return readWritten(f, mem)
}

// noPagemapScan is set once the kernel has refused PAGEMAP_SCAN.
var noPagemapScan atomic.Bool

// readWritten is writtenPages from an entry of /proc/self/pagemap (f) per
// page.
func readWritten(f *os.File, mem []byte) ([]uint64, error) {
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

// scanWritten is writtenPages from the ranges of pages PAGEMAP_SCAN, an
// ioctl of /proc/self/pagemap (f), finds present or swapped, with the
// same rule as written: a page in swap, or one in memory that is not the
// file's.
func scanWritten(f *os.File, mem []byte) ([]uint64, error) {
	n := uint64(len(mem)) / osPageSize
	set := make([]uint64, (n+63)/64)
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	var regions [128]pageRegion
	for start, end := base, base+n*osPageSize; start < end; {
		arg := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: start, end: end,
			vec: uint64(uintptr(unsafe.Pointer(&regions[0]))), vecLen: uint64(len(regions)),
			categoryAnyofMask: pageIsPresent | pageIsSwapped,
			returnMask:        pageIsPresent | pageIsSwapped | pageIsFile,
		}
		got, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), pagemapScan, uintptr(unsafe.Pointer(&arg)))
		runtime.KeepAlive(&regions)
		if errno != 0 {
			return nil, errno
		}
		for _, r := range regions[:got] {
			if r.categories&pageIsSwapped == 0 && r.categories&pageIsFile != 0 {
				continue // the file's page, only read
			}
			for p := (r.start - base) / osPageSize; p < (r.end-base)/osPageSize; p++ {
				set[p/64] |= 1 << (p % 64)
			}
		}
		if arg.walkEnd <= start {
			return nil, fmt.Errorf("sandbox: PAGEMAP_SCAN stopped at %#x, short of %#x", arg.walkEnd, end)
		}
		start = arg.walkEnd
	}
	return set, nil
}

// pmScanArg is the kernel's struct pm_scan_arg, and pageRegion its struct
// page_region (include/uapi/linux/fs.h).
type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages           uint64
	categoryInvertedMask, categoryMask, categoryAnyofMask, returnMask uint64
}

type pageRegion struct{ start, end, categories uint64 }

// The page categories of PAGEMAP_SCAN, and the ioctl's number:
// _IOWR('f', 16, struct pm_scan_arg).
const (
	pageIsFile    = 1 << 2
	pageIsPresent = 1 << 3
	pageIsSwapped = 1 << 4
	pagemapScan   = 3<<30 | unsafe.Sizeof(pmScanArg{})<<16 | 'f'<<8 | 16
)

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
