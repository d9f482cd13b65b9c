package wasi

import (
	"context"
	"encoding/binary"
)

// An instance has three file descriptors, stdio: stdin (always at its
// end), stdout and stderr, all character devices. An activity's may have
// the scratch directory too (files.go); every other fd is EBADF.

func isStdio(fd uint64) bool { return uint32(fd) <= 2 }

// onStdio is a function on a file descriptor that answers e for stdio,
// the files of the scratch directory as files.go does (scratch), and
// EBADF for any other fd.
func onStdio(e Errno, scratch func(*Env, Memory, []uint64) Errno) func(context.Context, *Env, Memory, []uint64) Errno {
	return func(_ context.Context, env *Env, m Memory, a []uint64) Errno {
		if isStdio(a[0]) {
			return e
		}
		return scratch(env, m, a)
	}
}

const fileTypeCharacterDevice = 2

// fdFdstatGet describes stdio as a blocking character device with every
// right. Blocking matters: Go's os package only polls a non-blocking fd, so
// the guest writes stdout and stderr synchronously and never waits on them
// in poll_oneoff. (fd_fdstat_set_flags succeeds and changes nothing.)
func fdFdstatGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	if !isStdio(a[0]) {
		return scratchFdstat(e, m, a[0], uint32(a[1]))
	}
	var stat [24]byte
	stat[0] = fileTypeCharacterDevice
	binary.LittleEndian.PutUint64(stat[8:], ^uint64(0))  // rights_base
	binary.LittleEndian.PutUint64(stat[16:], ^uint64(0)) // rights_inheriting
	return fault(m.Write(uint32(a[1]), stat[:]))
}

// fdFdstatSetFlags succeeds on stdio and changes nothing. A scratch file
// answers ENOTSUP, so that Go's os package keeps it blocking (it reads and
// writes it directly, never through poll_oneoff).
func fdFdstatSetFlags(_ context.Context, e *Env, _ Memory, a []uint64) Errno {
	switch {
	case isStdio(a[0]):
		return ESUCCESS
	case e.isScratchFd(a[0]):
		return ENOTSUP
	}
	return EBADF
}

// fdFilestatGet describes stdio as a character device with zero times,
// sizes and ids.
func fdFilestatGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	if !isStdio(a[0]) {
		return scratchFilestat(e, m, a[0], uint32(a[1]))
	}
	var stat [64]byte
	stat[16] = fileTypeCharacterDevice
	return fault(m.Write(uint32(a[1]), stat[:]))
}

// iovecs reads an array of n (address, length) pairs.
func iovecs(m Memory, addr, n uint32) ([][2]uint32, bool) {
	raw, ok := readArray(m, addr, n, 8)
	if !ok {
		return nil, false
	}
	out := make([][2]uint32, n)
	for i := range out {
		out[i] = [2]uint32{binary.LittleEndian.Uint32(raw[8*i:]), binary.LittleEndian.Uint32(raw[8*i+4:])}
	}
	return out, true
}

// fdWrite writes stdout and stderr to the environment's writers, whose
// errors the guest does not see: every byte counts as written.
func fdWrite(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	w := e.stdout
	switch uint32(a[0]) {
	case 1:
	case 2:
		w = e.stderr
	case 0:
		return EBADF
	default:
		return scratchWrite(e, m, a[0], uint32(a[1]), uint32(a[2]), -1, uint32(a[3]))
	}
	vecs, ok := iovecs(m, uint32(a[1]), uint32(a[2]))
	if !ok {
		return EFAULT
	}
	total := uint32(0)
	for _, v := range vecs {
		b, ok := m.Read(v[0], v[1])
		if !ok {
			return EFAULT
		}
		w.Write(b)
		total += v[1]
	}
	return fault(putU32(m, uint32(a[3]), total))
}

// fdRead reads nothing from stdin (it is always at its end).
func fdRead(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	switch uint32(a[0]) {
	case 0:
		return fault(putU32(m, uint32(a[3]), 0))
	case 1, 2:
		return EBADF
	}
	return scratchRead(e, m, a[0], uint32(a[1]), uint32(a[2]), -1, uint32(a[3]))
}

// The functions of fds whose answer for stdio is one errno; each answers
// a scratch file with what it does.

func fdClose(e *Env, _ Memory, a []uint64) Errno { return scratchClose(e, a[0]) }

func fdPread(e *Env, m Memory, a []uint64) Errno {
	return scratchRead(e, m, a[0], uint32(a[1]), uint32(a[2]), offset(a[3]), uint32(a[4]))
}

func fdPwrite(e *Env, m Memory, a []uint64) Errno {
	return scratchWrite(e, m, a[0], uint32(a[1]), uint32(a[2]), offset(a[3]), uint32(a[4]))
}

func fdReaddir(e *Env, m Memory, a []uint64) Errno {
	return scratchReaddir(e, m, a[0], uint32(a[1]), uint32(a[2]), a[3], uint32(a[4]))
}

func fdSeek(e *Env, m Memory, a []uint64) Errno {
	return scratchSeek(e, m, a[0], int64(a[1]), uint32(a[2]), uint32(a[3]))
}

func fdTell(e *Env, m Memory, a []uint64) Errno {
	return scratchSeek(e, m, a[0], 0, 1, uint32(a[1]))
}

func fdSetSize(e *Env, _ Memory, a []uint64) Errno { return scratchSetSize(e, a[0], a[1]) }

// offset is a file offset a guest gave, at most the largest int64 (a
// negative offset means the file's position to scratchRead and
// scratchWrite).
func offset(a uint64) int64 { return int64(min(a, 1<<63-1)) }

// answerOpen answers e for the scratch directory's files, EBADF for any
// other fd.
func answerOpen(e Errno) func(*Env, Memory, []uint64) Errno {
	return func(env *Env, _ Memory, a []uint64) Errno {
		if env.isScratchFd(a[0]) {
			return e
		}
		return EBADF
	}
}
