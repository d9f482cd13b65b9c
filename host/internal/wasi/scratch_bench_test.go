package wasi

import (
	"context"
	"testing"
)

// BenchmarkScratch_Unused is what an attempt that never touches its
// scratch directory pays for it; BenchmarkScratch_1KiB one that writes a
// file of 1 KiB: the directory's mkdir, the file's create, write and
// close, and the directory's removal.
func BenchmarkScratch_Unused(b *testing.B) { benchScratch(b, "") }

func BenchmarkScratch_1KiB(b *testing.B) { benchScratch(b, string(make([]byte, 1024))) }

func benchScratch(b *testing.B, data string) {
	e := NewReal(nil, nil, nil)
	e.OfferScratch()
	parent := b.TempDir()
	m := make(memory, 4096)
	t := &testing.T{}
	for b.Loop() {
		s := NewScratch(parent, 1<<20)
		e.SetScratch(s)
		if data != "" {
			errno, fd := open(t, e, m, "f", oflagCreate, true)
			if errno != ESUCCESS || write(t, e, m, fd, data, -1) != ESUCCESS ||
				call(t, context.Background(), e, m, "fd_close", fd) != ESUCCESS {
				b.Fatal("the file could not be written")
			}
		}
		e.SetScratch(nil)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
