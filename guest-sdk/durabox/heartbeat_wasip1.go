//go:build wasip1

package durabox

import (
	"errors"
	"unsafe"
)

//go:wasmimport durabox heartbeat
func hostHeartbeatImport(addr unsafe.Pointer, length uint32) uint32

// hostHeartbeat sends a heartbeat to the host (ABI.md, "Imports").
func hostHeartbeat(details []byte) error {
	switch hostHeartbeatImport(unsafe.Pointer(unsafe.SliceData(details)), uint32(len(details))) {
	case 0:
		return nil
	case 1:
		return ErrActivityCanceled
	}
	return errors.New("durabox: the host did not take the heartbeat: the attempt's lease is lost, and the task goes to another attempt")
}
