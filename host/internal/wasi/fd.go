package wasi

import (
	"context"
	"encoding/binary"
)

// An instance has three file descriptors, stdin (always at its end), stdout
// and stderr, all character devices, and nothing else: there are no
// preopened directories, so no file can be opened and every other fd is
// EBADF.

func isStdio(fd uint64) bool { return uint32(fd) <= 2 }

// onStdio is a function on a file descriptor that answers e for stdio and
// EBADF for any other fd.
func onStdio(e Errno) func(context.Context, *Env, Memory, []uint64) Errno {
	return func(_ context.Context, _ *Env, _ Memory, a []uint64) Errno {
		if isStdio(a[0]) {
			return e
		}
		return EBADF
	}
}

const fileTypeCharacterDevice = 2

// fdFdstatGet describes stdio as a blocking character device with every
// right. Blocking matters: Go's os package only polls a non-blocking fd, so
// the guest writes stdout and stderr synchronously and never waits on them
// in poll_oneoff. (fd_fdstat_set_flags succeeds and changes nothing.)
func fdFdstatGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	if !isStdio(a[0]) {
		return EBADF
	}
	var stat [24]byte
	stat[0] = fileTypeCharacterDevice
	binary.LittleEndian.PutUint64(stat[8:], ^uint64(0))  // rights_base
	binary.LittleEndian.PutUint64(stat[16:], ^uint64(0)) // rights_inheriting
	return fault(m.Write(uint32(a[1]), stat[:]))
}

// fdFilestatGet describes stdio as a character device with zero times,
// sizes and ids.
func fdFilestatGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	if !isStdio(a[0]) {
		return EBADF
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
	default:
		return EBADF
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
func fdRead(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	if uint32(a[0]) != 0 {
		return EBADF
	}
	return fault(putU32(m, uint32(a[3]), 0))
}
