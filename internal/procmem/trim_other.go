//go:build !(linux && cgo)

package procmem

// trimC does nothing without cgo on Linux: no C allocator then holds
// memory of its own (or there is no /proc to read the measure from).
func trimC() {}
