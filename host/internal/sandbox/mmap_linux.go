package sandbox

import (
	"os"
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
