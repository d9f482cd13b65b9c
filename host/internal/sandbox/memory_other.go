//go:build !unix

package sandbox

import "github.com/tetratelabs/wazero/experimental"

// mmapAllocator is nil where there is no mmap: wazero's default allocator
// serves.
var mmapAllocator experimental.MemoryAllocator

// image is a snapshot's memory, which instances copy in.
type image struct{ b []byte }

func newImage(b []byte) (*image, error) { return &image{b: b}, nil }

// allocator is wazero's default, so the memory starts zeroed and the caller
// copies the image in.
func (im *image) allocator(mapped *bool) experimental.MemoryAllocator { return nil }

// mapOnto cannot map without mmap: the caller copies the image in.
func (im *image) mapOnto(mem []byte) bool { return false }

func (im *image) copyTo(dst []byte) error {
	copy(dst, im.b)
	return nil
}

// restore copies the pages set in pages (a bit per page) from the image
// into mem, an instance's memory.
func (im *image) restore(mem []byte, pages []uint64) error {
	return eachRun(pages, min(uint64(len(mem)), uint64(len(im.b))), func(start, end uint64) error {
		copy(mem[start:end], im.b[start:end])
		return nil
	})
}

func (im *image) Close() error { return nil }

// writtenPages has nothing to tell without mappings.
func writtenPages(mem []byte) ([]uint64, error) { return nil, nil }

// populateWrite has nothing to do without mappings.
func populateWrite(mem []byte) {}
