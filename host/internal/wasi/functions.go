package wasi

import (
	"context"
	"slices"

	"github.com/durabox/durabox/abi"
)

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
	// errno). It may panic with *ExitError (proc_exit) or ErrBlockingSleep
	// (poll_oneoff), which the runtime must turn into a stop of the call.
	Call func(ctx context.Context, e *Env, m Memory, args []uint64) uint32
}

// Module is the import module name of WASI preview 1.
const Module = "wasi_snapshot_preview1"

// Modules maps each import module the host provides to its functions: WASI,
// and the host's own capabilities (abi.ImportModule).
var Modules = map[string][]Function{
	Module:           Functions,
	abi.ImportModule: slices.Concat(HTTPFunctions, PatchFunctions, HeartbeatFunctions),
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

func params(n int) []ValueType { return make([]ValueType, n) }

// answer is a function that always answers e.
func answer(e Errno) func(context.Context, *Env, Memory, []uint64) Errno {
	return func(context.Context, *Env, Memory, []uint64) Errno { return e }
}

// Functions lists every WASI preview 1 function, which the host all
// provides: a Go guest imports 36 of them (see the package doc), and any
// other WASI preview 1 module links too.
var Functions = []Function{
	{Name: "args_get", Params: params(2), Call: errno(answer(ESUCCESS))},
	{Name: "args_sizes_get", Params: params(2), Call: errno(argsSizesGet)},
	{Name: "environ_get", Params: params(2), Call: errno(environGet)},
	{Name: "environ_sizes_get", Params: params(2), Call: errno(environSizesGet)},
	{Name: "clock_res_get", Params: params(2), Call: errno(clockResGet)},
	{Name: "clock_time_get", Params: []ValueType{I32, I64, I32}, Call: errno(clockTimeGet)},
	{Name: "fd_advise", Params: []ValueType{I32, I64, I64, I32}, Call: errno(onStdio(ESPIPE, answerOpen(ESUCCESS)))},
	{Name: "fd_allocate", Params: []ValueType{I32, I64, I64}, Call: errno(onStdio(ENOTSUP, answerOpen(ENOTSUP)))},
	{Name: "fd_close", Params: params(1), Call: errno(onStdio(ESUCCESS, fdClose))},
	{Name: "fd_datasync", Params: params(1), Call: errno(onStdio(ESUCCESS, answerOpen(ESUCCESS)))},
	{Name: "fd_fdstat_get", Params: params(2), Call: errno(fdFdstatGet)},
	{Name: "fd_fdstat_set_flags", Params: params(2), Call: errno(fdFdstatSetFlags)},
	{Name: "fd_fdstat_set_rights", Params: []ValueType{I32, I64, I64}, Call: errno(onStdio(ENOTSUP, answerOpen(ENOTSUP)))},
	{Name: "fd_filestat_get", Params: params(2), Call: errno(fdFilestatGet)},
	{Name: "fd_filestat_set_size", Params: []ValueType{I32, I64}, Call: errno(onStdio(ENOTSUP, fdSetSize))},
	{Name: "fd_filestat_set_times", Params: []ValueType{I32, I64, I64, I32}, Call: errno(onStdio(ENOTSUP, answerOpen(ENOTSUP)))},
	{Name: "fd_pread", Params: []ValueType{I32, I32, I32, I64, I32}, Call: errno(onStdio(ESPIPE, fdPread))},
	{Name: "fd_prestat_get", Params: params(2), Call: errno(fdPrestatGet)},
	{Name: "fd_prestat_dir_name", Params: params(3), Call: errno(fdPrestatDirName)},
	{Name: "fd_pwrite", Params: []ValueType{I32, I32, I32, I64, I32}, Call: errno(onStdio(ESPIPE, fdPwrite))},
	{Name: "fd_read", Params: params(4), Call: errno(fdRead)},
	{Name: "fd_readdir", Params: []ValueType{I32, I32, I32, I64, I32}, Call: errno(onStdio(ENOTDIR, fdReaddir))},
	{Name: "fd_renumber", Params: params(2), Call: errno(onStdio(ENOTSUP, answerOpen(ENOTSUP)))},
	{Name: "fd_seek", Params: []ValueType{I32, I64, I32, I32}, Call: errno(onStdio(ESPIPE, fdSeek))},
	{Name: "fd_sync", Params: params(1), Call: errno(onStdio(ESUCCESS, answerOpen(ESUCCESS)))},
	{Name: "fd_tell", Params: params(2), Call: errno(onStdio(ESPIPE, fdTell))},
	{Name: "fd_write", Params: params(4), Call: errno(fdWrite)},
	{Name: "path_create_directory", Params: params(3), Call: errno(pathCreateDirectory)},
	{Name: "path_filestat_get", Params: params(5), Call: errno(pathFilestatGet)},
	{Name: "path_filestat_set_times", Params: []ValueType{I32, I32, I32, I32, I64, I64, I32}, Call: errno(answer(ENOTCAPABLE))},
	{Name: "path_link", Params: params(7), Call: errno(answer(ENOTCAPABLE))},
	{Name: "path_open", Params: []ValueType{I32, I32, I32, I32, I32, I64, I64, I32, I32}, Call: errno(pathOpen)},
	{Name: "path_readlink", Params: params(6), Call: errno(answer(ENOTCAPABLE))},
	{Name: "path_remove_directory", Params: params(3), Call: errno(pathRemoveDirectory)},
	{Name: "path_rename", Params: params(6), Call: errno(pathRename)},
	{Name: "path_symlink", Params: params(5), Call: errno(answer(ENOTCAPABLE))},
	{Name: "path_unlink_file", Params: params(3), Call: errno(pathUnlinkFile)},
	{Name: "poll_oneoff", Params: params(4), Call: errno(pollOneoff)},
	{Name: "proc_exit", Params: params(1), NoResult: true, Call: errno(procExit)},
	{Name: "proc_raise", Params: params(1), Call: errno(answer(ENOTSUP))},
	{Name: "sched_yield", Params: params(0), Call: errno(schedYield)},
	{Name: "random_get", Params: params(2), Call: errno(randomGet)},
	{Name: "sock_accept", Params: params(3), Call: errno(answer(ENOTSUP))},
	{Name: "sock_recv", Params: params(6), Call: errno(answer(ENOTSUP))},
	{Name: "sock_send", Params: params(5), Call: errno(answer(ENOTSUP))},
	{Name: "sock_shutdown", Params: params(2), Call: errno(answer(ENOTSUP))},
}

// schedYield succeeds, unless the call into the guest should stop (its
// context ended, or the step ran past its budget): then it stops it. The
// sandbox has every loop of a rewritten module call it every
// wasmrewrite.YieldEvery iterations, for exactly that, and so that the Go
// runtime of the host, which cannot stop compiled guest code, gets a
// moment to (a garbage collection waits for every goroutine).
func schedYield(ctx context.Context, e *Env, _ Memory, _ []uint64) Errno {
	if err := ctx.Err(); err != nil {
		panic(err)
	}
	e.countYield()
	return ESUCCESS
}

func procExit(_ context.Context, _ *Env, _ Memory, a []uint64) Errno {
	panic(&ExitError{Code: uint32(a[0])})
}
