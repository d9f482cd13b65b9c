package wasi

// Errno is a WASI error number.
type Errno uint32

// The error numbers the host answers with.
const (
	ESUCCESS    Errno = 0
	EBADF       Errno = 8
	EFAULT      Errno = 21
	EINTR       Errno = 27
	EINVAL      Errno = 28
	ENOTDIR     Errno = 54
	ENOTSUP     Errno = 58
	ESPIPE      Errno = 70
	ENOTCAPABLE Errno = 76
)
