//go:build linux && cgo

package procmem

/*
#include <malloc.h>
*/
import "C"

// trimC has glibc's allocator return the free memory of every arena to the
// system.
func trimC() { C.malloc_trim(0) }
