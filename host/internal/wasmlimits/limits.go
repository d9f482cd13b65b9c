// Package wasmlimits checks the sizes a WebAssembly module declares before
// a runtime decodes it.
//
// wazero's decoder (v1.12) makes each list a module declares as long as
// the module says, before it reads the items: a module of 15 bytes that
// declares 4,294,967,295 imports makes it ask for 480 GB, and the Go
// runtime then ends the process (running out of memory is not a panic, so
// nothing recovers it). So does a data segment, a name, a function body or
// a custom section that declares more bytes than follow, and a function
// that declares 4,294,967,295 locals in six bytes.
//
// Check walks a module as that decoder does, in its order, and refuses:
//
//   - a count of items, or a size in bytes, larger than the bytes left in
//     the module (every item takes a byte at least);
//   - a function with more than MaxLocals locals;
//   - a table of more than MaxTableElements elements at its start (an
//     instance allocates them all).
//
// So what the decoder allocates is bounded by the module's size, which
// the host bounds. Both limits are wasmtime's (its validator's), so a
// module one runtime takes the other takes too. Check reads only what it
// must to find those numbers, and refuses what it cannot read: the decoder
// would refuse it too. FuzzCheck holds it to wazero's decoder.
package wasmlimits

import "fmt"

// MaxLocals is how many locals one function may declare.
const MaxLocals = 50_000

// MaxTableElements is how many elements a table may have at its start.
const MaxTableElements = 10_000_000

// Section ids, as the decoder knows them.
const (
	secCustom = iota
	secType
	secImport
	secFunction
	secTable
	secMemory
	secGlobal
	secExport
	secStart
	secElement
	secCode
	secData
	secDataCount
)

// Check checks wasm's declared counts and sizes, as the package doc says.
// A module that does not begin with the wasm header is left to the
// runtime to refuse.
func Check(wasm []byte) error {
	r := &reader{b: wasm}
	if header, err := r.bytes(8); err != nil || string(header[:4]) != "\x00asm" {
		return nil
	}
	for !r.done() {
		id, _ := r.byte()
		size, err := r.size("bytes")
		if err != nil {
			return fmt.Errorf("wasmlimits: section %d: %w", id, err)
		}
		start := r.off
		if err := r.section(id, size); err != nil {
			return fmt.Errorf("wasmlimits: section %d: %w", id, err)
		}
		if read := r.off - start; read != int(size) {
			return fmt.Errorf("wasmlimits: section %d declares %d bytes and holds %d", id, size, read)
		}
	}
	return nil
}

// section checks the contents of one section, of size bytes.
func (r *reader) section(id byte, size uint32) error {
	switch id {
	case secCustom:
		return r.custom(size)
	case secType:
		return r.vector("types", r.funcType)
	case secImport:
		return r.vector("imports", r.importDesc)
	case secFunction:
		return r.vector("functions", r.u32)
	case secStart, secDataCount:
		return r.u32()
	case secTable:
		return r.vector("tables", r.table)
	case secMemory:
		return r.vector("memories", func() error {
			_, err := r.limits()
			return err
		})
	case secGlobal:
		return r.vector("globals", r.global)
	case secExport:
		return r.vector("exports", r.export)
	case secElement:
		return r.vector("element segments", r.element)
	case secCode:
		return r.vector("functions", r.code)
	case secData:
		return r.vector("data segments", r.data)
	}
	return fmt.Errorf("no runtime here reads a section of id %d", id)
}
