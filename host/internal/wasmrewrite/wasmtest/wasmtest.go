// Package wasmtest assembles small WebAssembly modules for the tests of the
// rewriter and the sandbox.
package wasmtest

import "encoding/binary"

// Module assembles a module from its sections, given as id (an int) and
// body (a string), in order.
func Module(sections ...any) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for i := 0; i < len(sections); i += 2 {
		body := sections[i+1].(string)
		b = binary.AppendUvarint(append(b, byte(sections[i].(int))), uint64(len(body)))
		b = append(b, body...)
	}
	return b
}

// Sections of a small reactor: type 0 is () -> (), type 1 () -> i32;
// function 0 is WASI's sched_yield, imported; function 1 has type 0, and
// its body is empty; the code section is last before data.
const (
	TypeSec     = "\x02\x60\x00\x00\x60\x00\x01\x7f"
	YieldImport = "\x16wasi_snapshot_preview1\x0bsched_yield\x00\x01"
	ImportSec   = "\x01" + YieldImport
	FuncSec     = "\x01\x00"
	MemorySec   = "\x01\x00\x01" // one memory of one page
	ExportSec   = "\x01\x0b_initialize\x00\x01"
	GlobalSec   = "\x02\x7f\x01\x41\x2a\x0b\x7e\x00\x42\x07\x0b" // mutable i32 = 42, immutable i64 = 7
	CodeSec     = "\x01\x02\x00\x0b"
	ActiveData  = "\x01\x00\x41\x10\x0b\x03abc" // "abc" at 16
	PassiveData = "\x01\x01\x03abc"
)
