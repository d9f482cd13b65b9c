// Package sandbox is the seam between the host and a WebAssembly runtime.
// Everything runtime-specific (wazero, NewWazero, and wasmtime-go,
// NewWasmtime) lives behind the Runtime interface; the WASI functions themselves are implemented once,
// runtime-agnostically, in package wasi, and every runtime wires them in.
//
// A module is a WASI reactor (GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared): instantiating it runs _initialize, then the host
// calls its exports. Each instance answers its WASI calls from its own
// wasi.Env, deterministic for an orchestration, real for an activity.
//
// An orchestration's instance (a deterministic Env) always starts under one
// fixed Env (wasi.Env.Starting: seed zero, clock at zero, no environment),
// whatever its own seed, and its own Env answers from the first call after
// _initialize. Because the Go runtime seeds its own randomness (the global
// source of math/rand and math/rand/v2, map iteration order, hash seeds)
// while it starts, those are the same in every instance of a module; what
// the guest asks of its Env later (crypto/rand, the clock) comes from its
// own Env. So how an instance started never changes what it observes: it
// can start from a snapshot (Config.FromSnapshot), the module's state right
// after that fixed start, made once per Module on first use and the same
// byte for byte in every process, which skips _initialize and shares the
// snapshot's memory copy-on-write, so it costs only the pages it writes; or
// the normal way, which a module the sandbox cannot snapshot (one package
// wasmrewrite refuses, which wazero alone runs) always takes. Both runtimes
// start from snapshots, and both reset a healthy instance to its snapshot
// when it closes and hand it to the next Instantiate (recycle.go). An
// activity's instance (a real Env) starts the normal way under its own
// Env, so its runtime seeds itself from real randomness.
//
// A call ends in one of seven ways, which the caller tells apart with
// errors.Is and errors.As:
//
//   - it returns;
//   - the guest called os.Exit: *wasi.ExitError, with the code;
//   - a deterministic guest ran past its step budget of loop iterations,
//     bulk memory instructions charged by their length
//     (wasi.Env.SetStepBudget; only in a module wasmrewrite rewrote):
//     *wasi.BudgetError;
//   - a deterministic guest left a timer of the time package running
//     (time.AfterFunc, time.NewTimer, a context with a deadline…; only in
//     a module wasmrewrite rewrote, found by the names of its functions):
//     *TimerError, even if it returned normally;
//   - a deterministic guest waited on the clock (time.Sleep) and started
//     no timer: wasi.ErrBlockingSleep;
//   - the call's context ended (its wall-clock deadline stops even an
//     endless loop): context.DeadlineExceeded or context.Canceled;
//   - the guest trapped (a Go panic or fatal error, whose message it wrote
//     to stderr first; a wasm fault): *TrapError.
//
// After an error the instance is unusable (further calls return ErrStopped)
// and the caller closes it.
package sandbox

import (
	"context"
	"errors"
	"slices"

	"github.com/durabox/durabox/host/internal/wasi"
)

// Runtime compiles modules.
type Runtime interface {
	// Compile validates and compiles a module. The error says what is wrong
	// with the bytes when they are not a valid wasm module.
	Compile(ctx context.Context, wasm []byte) (Module, error)
	Close(ctx context.Context) error
}

// Import names one function a module imports.
type Import struct {
	Module string
	Name   string
}

// Module is a compiled module, ready to instantiate many times, also at
// once.
type Module interface {
	// Imports lists the functions the module imports, in its order.
	Imports() []Import
	// Exports lists the names of the functions the module exports, sorted.
	Exports() []string
	// Instantiate creates an instance whose WASI calls are answered by
	// cfg.Env, after it ran the reactor initializer (_initialize) under
	// cfg.Env.Starting(); if that fails, the error is the one Call would
	// return for it. With
	// cfg.FromSnapshot, the instance starts from the module's snapshot
	// instead, as the package doc describes.
	Instantiate(ctx context.Context, cfg Config) (Instance, error)
	Close(ctx context.Context) error
}

// Config configures one instance.
type Config struct {
	// Env answers the instance's WASI calls for its whole life. Required.
	Env *wasi.Env
	// FromSnapshot starts the instance from the module's snapshot instead
	// of running _initialize, when the module has one. Only for a
	// deterministic Env (an orchestration), which observes the same either
	// way; an activity's Go runtime must seed itself from its real Env.
	// False means the normal start.
	FromSnapshot bool
}

// check refuses a Config without an Env, and a module (whose sorted
// exports are exports) that is not a WASI reactor.
func (cfg Config) check(exports []string) error {
	if cfg.Env == nil {
		return errors.New("sandbox: instantiate: Config.Env is nil")
	}
	if _, ok := slices.BinarySearch(exports, initialize); !ok {
		return errors.New("sandbox: instantiate: the module does not export _initialize, so it is not a WASI reactor; build it with -buildmode=c-shared")
	}
	return nil
}

// Instance is one live instance of a module. It is used by one goroutine at
// a time.
type Instance interface {
	// Call calls an exported function. It fails as the package doc
	// describes, after which the instance must be closed.
	Call(ctx context.Context, export string, args ...uint64) ([]uint64, error)
	// Read copies length bytes of linear memory at addr.
	Read(addr, length uint32) ([]byte, bool)
	// Write copies b into linear memory at addr.
	Write(addr uint32, b []byte) bool
	// MemorySize is the current size of linear memory in bytes.
	MemorySize() uint64
	// Resident is the memory of its own the instance holds, in bytes: the
	// pages of its linear memory it has written, and what the runtime keeps
	// for it beside them (a constant per runtime, measured). A page of a
	// snapshot that it only read is the snapshot's, shared by every
	// instance, and costs it nothing. Where the system does not tell which
	// pages were written, every page counts. It reads the process's page table: microseconds,
	// not nanoseconds.
	Resident() uint64
	Close(ctx context.Context) error
}
