// Package wasmrewrite rewrites a WebAssembly module so that the sandbox
// can start its instances from a snapshot and stop them in an endless loop,
// on any runtime: the rewritten module is the one every runtime compiles.
//
// Rewrite takes the data segments out (the sandbox writes them into memory
// itself, or maps a snapshot in which they already are), exports every
// mutable global (so that its value can be read after _initialize and set
// in a new instance), makes every loop yield now and then (code.go), and
// marks the functions of a Go module that start a timer of the time
// package, which an orchestration may not keep (timer.go, with name.go),
// and has every bulk instruction charge that yield budget by its length
// (charge.go), so that a step budget counts what they do. It knows just
// enough of the binary format
// (https://webassembly.github.io/spec/core/binary/modules.html) to do that,
// one file per section as in wazero's internal/wasm/binary: type.go,
// import.go, function.go, table.go, memory.go, global.go, export.go,
// code.go (with instr.go, the instructions), data.go. Whatever it does not
// know, it refuses with an error wrapping ErrUnsupported, never a panic
// (FuzzRewrite), and the sandbox compiles the module as is.
package wasmrewrite
