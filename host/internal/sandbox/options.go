package sandbox

import "fmt"

// Options configures a runtime, wazero or wasmtime. The zero value means
// defaults.
type Options struct {
	// CacheDir keeps compiled modules on disk, so a restarted host does not
	// compile them again; it is created if missing. Empty means no disk
	// cache.
	CacheDir string
	// MemoryLimitBytes caps every instance's linear memory, in bytes,
	// rounded down to whole 64 KiB wasm pages. Zero means the 4 GiB a wasm32
	// module can address.
	MemoryLimitBytes uint64
}

const (
	pageSize  = 64 << 10
	maxMemory = 4 << 30
)

func (o *Options) validate() error {
	switch {
	case o.MemoryLimitBytes == 0:
		o.MemoryLimitBytes = maxMemory
	case o.MemoryLimitBytes < pageSize:
		return fmt.Errorf("sandbox: the memory limit is %d bytes, less than one 64 KiB wasm page", o.MemoryLimitBytes)
	case o.MemoryLimitBytes > maxMemory:
		return fmt.Errorf("sandbox: the memory limit is %d bytes, more than the 4 GiB a wasm32 module can address", o.MemoryLimitBytes)
	}
	return nil
}
