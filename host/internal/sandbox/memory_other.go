//go:build !unix

package sandbox

import "github.com/tetratelabs/wazero/experimental"

// mmapAllocator is nil where there is no mmap: wazero's default allocator
// serves.
var mmapAllocator experimental.MemoryAllocator
