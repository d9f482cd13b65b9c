package wasi

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/durabox/durabox/abi"
)

// Memory is the guest's linear memory, as a runtime exposes it.
type Memory interface {
	// Read returns n bytes at addr (possibly aliasing memory), or false if
	// they are out of range.
	Read(addr, n uint32) ([]byte, bool)
	// Write copies b to addr, or returns false if it is out of range.
	Write(addr uint32, b []byte) bool
}

// ValueType is a wasm value type of a parameter.
type ValueType byte

// The value types WASI preview 1 functions take.
const (
	I32 ValueType = iota
	I64
)

// Function is one host function, for a runtime to register under its
// module. All but proc_exit return an i32.
type Function struct {
	Name   string
	Params []ValueType
	// NoResult is set for proc_exit, which returns nothing.
	NoResult bool
	// Call runs the function and returns its i32 result (for WASI, an
	// errno). It may panic with *ExitError, which the runtime must turn into
	// a stop of the call.
	Call func(ctx context.Context, e *Env, m Memory, args []uint64) uint32
}

// Module is the import module name of WASI preview 1.
const Module = "wasi_snapshot_preview1"

// Modules maps each import module the host provides to its functions: WASI,
// and the host's own capabilities (abi.ImportModule).
var Modules = map[string][]Function{
	Module:           Functions,
	abi.ImportModule: HTTPFunctions,
}

// Provides reports whether the host implements the import module.name.
func Provides(module, name string) bool {
	for _, f := range Modules[module] {
		if f.Name == name {
			return true
		}
	}
	return false
}

// errno adapts a WASI function, which returns an errno, to Function.Call.
func errno(f func(context.Context, *Env, Memory, []uint64) Errno) func(context.Context, *Env, Memory, []uint64) uint32 {
	return func(ctx context.Context, e *Env, m Memory, a []uint64) uint32 { return uint32(f(ctx, e, m, a)) }
}

// Errno is a WASI error number.
type Errno uint32

// The error numbers the host answers with.
const (
	ESUCCESS    Errno = 0
	EBADF       Errno = 8
	EFAULT      Errno = 21
	EINTR       Errno = 27
	EINVAL      Errno = 28
	ENOTSUP     Errno = 58
	ENOTCAPABLE Errno = 76
)

func params(n int) []ValueType { return make([]ValueType, n) }

// badFD answers every operation on a file descriptor that does not exist:
// an instance has stdin, stdout and stderr, and nothing else.
func badFD(context.Context, *Env, Memory, []uint64) Errno { return EBADF }

// notCapable answers operations on paths: there are no directories.
func notCapable(context.Context, *Env, Memory, []uint64) Errno { return ENOTCAPABLE }

func ok(context.Context, *Env, Memory, []uint64) Errno { return ESUCCESS }

// Functions lists every WASI preview 1 function the host provides, which is
// all of them.
var Functions = []Function{
	{Name: "args_get", Params: params(2), Call: errno(ok)},
	{Name: "args_sizes_get", Params: params(2), Call: errno(argsSizesGet)},
	{Name: "environ_get", Params: params(2), Call: errno(environGet)},
	{Name: "environ_sizes_get", Params: params(2), Call: errno(environSizesGet)},
	{Name: "clock_res_get", Params: params(2), Call: errno(clockResGet)},
	{Name: "clock_time_get", Params: []ValueType{I32, I64, I32}, Call: errno(clockTimeGet)},
	{Name: "fd_advise", Params: []ValueType{I32, I64, I64, I32}, Call: errno(badFD)},
	{Name: "fd_allocate", Params: []ValueType{I32, I64, I64}, Call: errno(badFD)},
	{Name: "fd_close", Params: params(1), Call: errno(stdioOnly)},
	{Name: "fd_datasync", Params: params(1), Call: errno(badFD)},
	{Name: "fd_fdstat_get", Params: params(2), Call: errno(fdFdstatGet)},
	{Name: "fd_fdstat_set_flags", Params: params(2), Call: errno(stdioOnly)},
	{Name: "fd_fdstat_set_rights", Params: []ValueType{I32, I64, I64}, Call: errno(badFD)},
	{Name: "fd_filestat_get", Params: params(2), Call: errno(badFD)},
	{Name: "fd_filestat_set_size", Params: []ValueType{I32, I64}, Call: errno(badFD)},
	{Name: "fd_filestat_set_times", Params: []ValueType{I32, I64, I64, I32}, Call: errno(badFD)},
	{Name: "fd_pread", Params: []ValueType{I32, I32, I32, I64, I32}, Call: errno(badFD)},
	{Name: "fd_prestat_get", Params: params(2), Call: errno(badFD)},
	{Name: "fd_prestat_dir_name", Params: params(3), Call: errno(badFD)},
	{Name: "fd_pwrite", Params: []ValueType{I32, I32, I32, I64, I32}, Call: errno(badFD)},
	{Name: "fd_read", Params: params(4), Call: errno(fdRead)},
	{Name: "fd_readdir", Params: []ValueType{I32, I32, I32, I64, I32}, Call: errno(badFD)},
	{Name: "fd_renumber", Params: params(2), Call: errno(badFD)},
	{Name: "fd_seek", Params: []ValueType{I32, I64, I32, I32}, Call: errno(badFD)},
	{Name: "fd_sync", Params: params(1), Call: errno(badFD)},
	{Name: "fd_tell", Params: params(2), Call: errno(badFD)},
	{Name: "fd_write", Params: params(4), Call: errno(fdWrite)},
	{Name: "path_create_directory", Params: params(3), Call: errno(notCapable)},
	{Name: "path_filestat_get", Params: params(5), Call: errno(notCapable)},
	{Name: "path_filestat_set_times", Params: []ValueType{I32, I32, I32, I32, I64, I64, I32}, Call: errno(notCapable)},
	{Name: "path_link", Params: params(7), Call: errno(notCapable)},
	{Name: "path_open", Params: []ValueType{I32, I32, I32, I32, I32, I64, I64, I32, I32}, Call: errno(notCapable)},
	{Name: "path_readlink", Params: params(6), Call: errno(notCapable)},
	{Name: "path_remove_directory", Params: params(3), Call: errno(notCapable)},
	{Name: "path_rename", Params: params(6), Call: errno(notCapable)},
	{Name: "path_symlink", Params: params(5), Call: errno(notCapable)},
	{Name: "path_unlink_file", Params: params(3), Call: errno(notCapable)},
	{Name: "poll_oneoff", Params: params(4), Call: errno(pollOneoff)},
	{Name: "proc_exit", Params: params(1), NoResult: true, Call: errno(procExit)},
	{Name: "proc_raise", Params: params(1), Call: errno(func(context.Context, *Env, Memory, []uint64) Errno { return ENOTSUP })},
	{Name: "sched_yield", Params: params(0), Call: errno(ok)},
	{Name: "random_get", Params: params(2), Call: errno(randomGet)},
	{Name: "sock_accept", Params: params(3), Call: errno(badFD)},
	{Name: "sock_recv", Params: params(6), Call: errno(badFD)},
	{Name: "sock_send", Params: params(5), Call: errno(badFD)},
	{Name: "sock_shutdown", Params: params(2), Call: errno(badFD)},
}

func putU32(m Memory, addr uint32, v uint32) bool {
	return m.Write(addr, binary.LittleEndian.AppendUint32(nil, v))
}

func putU64(m Memory, addr uint32, v uint64) bool {
	return m.Write(addr, binary.LittleEndian.AppendUint64(nil, v))
}

func fault(written bool) Errno {
	if written {
		return ESUCCESS
	}
	return EFAULT
}

func isStdio(fd uint64) bool { return uint32(fd) <= 2 }

func stdioOnly(_ context.Context, _ *Env, _ Memory, a []uint64) Errno {
	if isStdio(a[0]) {
		return ESUCCESS
	}
	return EBADF
}

func argsSizesGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	return fault(putU32(m, uint32(a[0]), 0) && putU32(m, uint32(a[1]), 0))
}

func environSizesGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	n, block := e.environBlock()
	return fault(putU32(m, uint32(a[0]), uint32(n)) && putU32(m, uint32(a[1]), uint32(len(block))))
}

func environGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	ptrs, buf := uint32(a[0]), uint32(a[1])
	_, block := e.environBlock()
	if !m.Write(buf, block) {
		return EFAULT
	}
	off := uint32(0)
	for i, kv := range e.environ {
		if !putU32(m, ptrs+uint32(4*i), buf+off) {
			return EFAULT
		}
		off += uint32(len(kv)) + 1
	}
	return ESUCCESS
}

const (
	clockRealtime  = 0
	clockMonotonic = 1
)

func clockResGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	if uint32(a[0]) > 3 {
		return EINVAL
	}
	return fault(putU64(m, uint32(a[1]), 1))
}

func clockTimeGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	var now int64
	switch uint32(a[0]) {
	case clockRealtime:
		now = e.wallClock()
	case clockMonotonic, 2, 3: // process and thread CPU time count as monotonic
		now = e.monotonic()
	default:
		return EINVAL
	}
	return fault(putU64(m, uint32(a[2]), uint64(now)))
}

const fileTypeCharacterDevice = 2

func fdFdstatGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	if !isStdio(a[0]) {
		return EBADF
	}
	var stat [24]byte
	stat[0] = fileTypeCharacterDevice
	binary.LittleEndian.PutUint64(stat[8:], ^uint64(0)) // rights: all
	return fault(m.Write(uint32(a[1]), stat[:]))
}

// iovecs reads an array of n (address, length) pairs.
func iovecs(m Memory, addr, n uint32) ([][2]uint32, bool) {
	raw, ok := m.Read(addr, 8*n)
	if !ok {
		return nil, false
	}
	out := make([][2]uint32, n)
	for i := range out {
		out[i] = [2]uint32{binary.LittleEndian.Uint32(raw[8*i:]), binary.LittleEndian.Uint32(raw[8*i+4:])}
	}
	return out, true
}

func fdWrite(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	fd := uint32(a[0])
	if fd != 1 && fd != 2 {
		return EBADF
	}
	w := e.stdout
	if fd == 2 {
		w = e.stderr
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

func randomGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	b := make([]byte, uint32(a[1]))
	e.fillRandom(b)
	return fault(m.Write(uint32(a[0]), b))
}

func procExit(_ context.Context, _ *Env, _ Memory, a []uint64) Errno {
	panic(&ExitError{Code: uint32(a[0])})
}

// Layout of poll_oneoff's subscriptions (48 bytes) and events (32 bytes).
const (
	subscriptionSize = 48
	eventSize        = 32
	eventTypeClock   = 0
	subClockAbsTime  = 1
)

// pollOneoff answers at once for every fd subscription (there are no fds to
// wait on: each reports EBADF) and for clock subscriptions already due. If
// only clocks remain, a real environment sleeps until the first is due; a
// deterministic one moves its monotonic clock there at once and records the
// wait (see Env.TakeSleep).
func pollOneoff(ctx context.Context, e *Env, m Memory, a []uint64) Errno {
	in, out, n := uint32(a[0]), uint32(a[1]), uint32(a[2])
	if n == 0 {
		return EINVAL
	}
	subs, ok := m.Read(in, n*subscriptionSize)
	if !ok {
		return EFAULT
	}
	var events []byte
	wait := int64(-1)
	var clockEvents []byte
	for i := uint32(0); i < n; i++ {
		s := subs[i*subscriptionSize:]
		ev := make([]byte, eventSize)
		copy(ev, s[:8]) // userdata
		ev[10] = s[8]   // type
		if s[8] != eventTypeClock {
			binary.LittleEndian.PutUint16(ev[8:], uint16(EBADF))
			events = append(events, ev...)
			continue
		}
		timeout := int64(binary.LittleEndian.Uint64(s[24:]))
		if binary.LittleEndian.Uint16(s[40:])&subClockAbsTime != 0 {
			now := e.monotonic()
			if binary.LittleEndian.Uint32(s[16:]) == clockRealtime {
				now = e.wallClock()
			}
			timeout -= now
		}
		if timeout <= 0 {
			events = append(events, ev...)
			continue
		}
		if wait < 0 || timeout < wait {
			wait, clockEvents = timeout, ev
		}
	}
	if len(events) == 0 && wait > 0 {
		if e.deterministic {
			e.mono += wait
			e.slept += time.Duration(wait)
			return answer(m, out, a[3], clockEvents)
		}
		t := time.NewTimer(time.Duration(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return EINTR
		case <-t.C:
		}
		events = clockEvents
	}
	return answer(m, out, a[3], events)
}

// answer writes poll_oneoff's events and their count.
func answer(m Memory, out uint32, count uint64, events []byte) Errno {
	if !m.Write(out, events) {
		return EFAULT
	}
	return fault(putU32(m, uint32(count), uint32(len(events)/eventSize)))
}
