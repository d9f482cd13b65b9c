package wasi

// Errno is a WASI error number.
type Errno uint32

// The error numbers the host answers with.
const (
	ESUCCESS     Errno = 0
	EACCES       Errno = 2
	EBADF        Errno = 8
	EBUSY        Errno = 10
	EEXIST       Errno = 20
	EFAULT       Errno = 21
	EFBIG        Errno = 22
	EINTR        Errno = 27
	EINVAL       Errno = 28
	EIO          Errno = 29
	EISDIR       Errno = 31
	ELOOP        Errno = 32
	EMFILE       Errno = 33
	ENAMETOOLONG Errno = 37
	ENOENT       Errno = 44
	ENOSPC       Errno = 51
	ENOTDIR      Errno = 54
	ENOTEMPTY    Errno = 55
	ENOTSUP      Errno = 58
	EPERM        Errno = 63
	ESPIPE       Errno = 70
	EXDEV        Errno = 75
	ENOTCAPABLE  Errno = 76
)
