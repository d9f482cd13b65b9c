//go:build wasip1

package durabox

import "unsafe"

//go:wasmimport durabox patched
func hostPatched(addr unsafe.Pointer, length uint32) uint32

// askPatched asks the host, which knows what the step's history records,
// whether the orchestration takes the change's new path (ABI.md,
// "Patches"). The activation itself does not say, so that it is the same
// live and on replay.
func askPatched(_ *runtime, id string) bool {
	return hostPatched(unsafe.Pointer(unsafe.StringData(id)), uint32(len(id))) == 1
}
