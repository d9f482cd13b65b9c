// Package sandbox is the seam between the host and a WebAssembly runtime.
// Everything runtime-specific (wazero today, wasmtime-go later) lives behind
// the Runtime interface; the WASI functions themselves are implemented once,
// runtime-agnostically, in package wasi, and every runtime wires them in.
package sandbox

import (
	"context"

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

// Module is a compiled module, ready to instantiate many times.
type Module interface {
	// Imports lists the functions the module imports.
	Imports() []Import
	// Exports lists the names of the functions the module exports.
	Exports() []string
	// Instantiate creates an instance whose WASI calls are answered by
	// cfg.Env, and runs the reactor initializer (_initialize) under it.
	Instantiate(ctx context.Context, cfg Config) (Instance, error)
	Close(ctx context.Context) error
}

// Config configures one instance.
type Config struct {
	// Env answers the instance's WASI calls for its whole life.
	Env *wasi.Env
}

// Instance is one live instance of a module.
type Instance interface {
	// Call calls an exported function. A trap, an exit or a cancelled ctx
	// returns an error, after which the instance must be closed.
	Call(ctx context.Context, export string, args ...uint64) ([]uint64, error)
	// Read copies length bytes of linear memory at addr.
	Read(addr, length uint32) ([]byte, bool)
	// Write copies b into linear memory at addr.
	Write(addr uint32, b []byte) bool
	// MemorySize is the current size of linear memory in bytes.
	MemorySize() uint64
	Close(ctx context.Context) error
}
