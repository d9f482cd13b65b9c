package sandbox

import (
	"errors"
	"math/bits"
	"os"
	"slices"
	"syscall"
	"testing"
)

// TestWrittenPages classifies pagemap entries: a page the process wrote is
// its own whether it is in memory or in swap; a page of the file it maps,
// or one it never touched, is not.
func TestWrittenPages(t *testing.T) {
	const present, swapped, file, pfn = 1 << 63, 1 << 62, 1 << 61, 0x1234
	for _, tt := range []struct {
		name  string
		entry uint64
		want  bool
	}{
		{"written, in memory", present | pfn, true},
		{"written, swapped out", swapped | 0x55, true},
		{"the file's page, read", present | file | pfn, false},
		{"never touched", 0, false},
	} {
		if got := written(tt.entry); got != tt.want {
			t.Errorf("%s (entry %#x): written = %v; want %v", tt.name, tt.entry, got, tt.want)
		}
	}
}

// TestScanWritten finds the same written pages with PAGEMAP_SCAN as with
// an entry of /proc/self/pagemap per page, in a private mapping of a file
// (pages read, written, never touched) and in an anonymous one (pages
// read, which map the zero page, and written).
func TestScanWritten(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "image")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const pages = 1000
	size := pages * int(osPageSize)
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	fileMem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(fileMem)
	anonMem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(anonMem)
	pm, err := pagemap()
	if err != nil {
		t.Fatal(err)
	}
	for name, mem := range map[string][]byte{"file": fileMem, "anonymous": anonMem} {
		for p := 0; p < pages; p += 3 {
			sink += mem[p*int(osPageSize)] // read
		}
		for p := 0; p < pages; p += 7 {
			mem[p*int(osPageSize)+5] = 1 // written
		}
		want, err := readWritten(pm, mem)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scanWritten(pm, mem)
		if errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EINVAL) {
			t.Fatalf("the kernel refused PAGEMAP_SCAN (%v): it needs Linux 6.7 or later, and writtenPages reads an entry per page without it", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s mapping: PAGEMAP_SCAN found %d written pages, pagemap %d", name, count(got), count(want))
		}
		if name == "file" && count(want) != (pages+6)/7 {
			t.Errorf("file mapping: %d written pages, want %d", count(want), (pages+6)/7)
		}
	}
}

// sink keeps the test's reads from being compiled away.
var sink byte

func count(set []uint64) (n int) {
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	return n
}
