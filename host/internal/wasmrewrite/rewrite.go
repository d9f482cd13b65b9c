package wasmrewrite

import "bytes"

// Layout is what Rewrite learns of a module, and the module rewritten.
type Layout struct {
	// Wasm is the rewritten module.
	Wasm []byte
	// Globals are the export names of the mutable globals, in index order.
	Globals []string
	// Segments are the data segments, in order.
	Segments []Segment
	// MemoryMin is the memory's initial size, in 64 KiB pages.
	MemoryMin uint32
	// ChangesTables is set when the code changes a table (table.set,
	// table.grow and the like), which a reset to the snapshot would not
	// undo.
	ChangesTables bool
}

// Segment is an active data segment: Data goes at Offset in memory 0.
type Segment struct {
	Offset uint32
	Data   []byte
}

// GlobalExportPrefix names the exports of the module's mutable globals
// that Rewrite adds; a colon cannot appear in a name the Go toolchain
// exports.
const GlobalExportPrefix = "durabox:global:"

// BudgetExport names the yield budget's export (code.go): a runtime sets it
// to YieldEvery at the start of every call into the guest, so that where
// the guest yields in a call depends on that call alone, whatever ran in
// the instance before (a snapshot, a reuse, an earlier step).
const BudgetExport = "durabox:budget"

// pageSize is the size of a wasm memory page.
const pageSize = 64 << 10

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// sectionOrder is where a section must appear relative to the others (the
// data count section comes before the code section, the tag section before
// globals); custom sections are 0 and go anywhere.
func sectionOrder(id byte) int {
	switch id {
	case 13: // tag
		return 55
	case secDataCount:
		return 95
	}
	return int(id) * 10
}

// rewriter is one module's rewrite in progress.
type rewriter struct {
	l   *Layout
	out []byte
	// types are the function types, encoded; imports what the import
	// section says; mutable the indices of the mutable globals; budget the
	// index of the yield budget, timers those of the timer marks' globals;
	// marked the functions of timerNames(), each with the index of its
	// name there.
	types   []string
	imports imported
	mutable []uint32
	budget  uint32
	timers  timerGlobalsAt
	marked  map[uint32]int
	// charge is the function index of $charge (charge.go), and chargeType
	// the index of its type, when charging: once the function section has
	// declared it.
	charge, chargeType uint32
	charging           bool
	// globalsOut, exported and coded are set once the global, the export
	// and the code section are written.
	globalsOut, exported, coded bool
}

// Rewrite parses wasm and returns its rewritten form, or an error wrapping
// ErrUnsupported when the module is not one it can rewrite.
func Rewrite(wasm []byte) (*Layout, error) {
	const header = "\x00asm\x01\x00\x00\x00"
	if !bytes.HasPrefix(wasm, []byte(header)) {
		return nil, unsupported("not a wasm 1 binary")
	}
	w := &rewriter{l: &Layout{}, out: append(make([]byte, 0, len(wasm)+len(wasm)/16), header...),
		marked: functionsNamed(wasm[len(header):], timerNames())}
	in := reader{b: wasm[len(header):]}
	var (
		haveMemory bool
		last       int
	)
	for !in.done() {
		id, err := in.byte()
		if err != nil {
			return nil, err
		}
		size, err := in.u32()
		if err != nil {
			return nil, err
		}
		body, err := in.bytes(size)
		if err != nil {
			return nil, err
		}
		if id != secCustom {
			order := sectionOrder(id)
			if order <= last {
				return nil, unsupported("section %d out of order", id)
			}
			last = order
			if err := w.addMissing(order); err != nil {
				return nil, err
			}
		}
		switch id {
		case secType:
			if err := w.typeSection(body); err != nil {
				return nil, err
			}
			continue
		case secImport:
			if w.imports, err = parseImports(body); err != nil {
				return nil, err
			}
		case secFunction:
			if err := w.functionSection(body); err != nil {
				return nil, err
			}
			continue
		case secTable:
			if err := parseTables(body); err != nil {
				return nil, err
			}
		case secMemory:
			if w.l.MemoryMin, err = parseMemory(body); err != nil {
				return nil, err
			}
			haveMemory = true
		case secGlobal:
			if w.mutable, err = parseGlobals(body, w.imports.globals); err != nil {
				return nil, err
			}
			if err := w.globalSection(body); err != nil {
				return nil, err
			}
			continue
		case secExport:
			if err := w.exportSection(body); err != nil {
				return nil, err
			}
			continue
		case secStart:
			// It would run again in every instance started from a snapshot.
			return nil, unsupported("the module has a start function")
		case secCode:
			if err := w.codeSection(body); err != nil {
				return nil, err
			}
			continue
		case secData:
			if w.l.Segments, err = parseData(body); err != nil {
				return nil, err
			}
			continue // dropped
		case secDataCount:
			w.out = appendSection(w.out, secDataCount, appendU32(nil, 0))
			continue
		}
		w.out = appendSection(w.out, id, body)
	}
	if err := w.addMissing(sectionOrder(secData) + 1); err != nil {
		return nil, err
	}
	if !haveMemory {
		return nil, unsupported("the module defines no memory")
	}
	for i, s := range w.l.Segments {
		if uint64(s.Offset)+uint64(len(s.Data)) > uint64(w.l.MemoryMin)*pageSize {
			return nil, unsupported("data segment %d (at %d, %d bytes) lies outside the initial memory", i, s.Offset, len(s.Data))
		}
	}
	w.l.Wasm = w.out
	return w.l, nil
}

// addMissing writes the global and export sections, if the module has
// none, before a section that must come after them; and the code section,
// if the module has none and the function section declared $charge.
func (w *rewriter) addMissing(order int) error {
	if !w.globalsOut && order > sectionOrder(secGlobal) {
		if err := w.globalSection(nil); err != nil {
			return err
		}
	}
	if !w.exported && order > sectionOrder(secExport) {
		if err := w.exportSection(nil); err != nil {
			return err
		}
	}
	if w.charging && !w.coded && order > sectionOrder(secCode) {
		return w.codeSection(appendU32(nil, 0))
	}
	return nil
}
