package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// A module that can start from a snapshot is compiled rewritten: its data
// segments are taken out (the sandbox writes them into memory itself, or
// maps a snapshot in which they already are), every mutable global is
// exported, so that its value can be read after _initialize and set in a new
// instance, and every loop yields now and then (yield.go). The parser below
// knows just enough of the wasm binary format
// (https://webassembly.github.io/spec/core/binary/modules.html) to do that;
// whatever it does not know, it refuses, and the module is compiled as is.

// layout is what rewrite learns of a module.
type layout struct {
	// wasm is the rewritten module, until it is compiled.
	wasm []byte
	// globals are the export names of the mutable globals, in index order.
	globals []string
	// segments are the data segments, in order.
	segments []segment
	// memoryMin is the memory's initial size, in pages.
	memoryMin uint32
	// changesTables is set when the code changes a table (table.set,
	// table.grow and the like), which a reset to the snapshot would not
	// undo.
	changesTables bool
}

// segment is an active data segment: data goes at offset in memory 0.
type segment struct {
	offset uint32
	data   []byte
}

// globalExportPrefix names the exports rewrite adds; a colon cannot appear in
// a name the Go toolchain exports.
const globalExportPrefix = "durabox:global:"

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secData      = 11
	secCode      = 10
	secDataCount = 12
)

// errUnsupported wraps every reason a module is compiled as is.
var errUnsupported = errors.New("no snapshot")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUnsupported}, args...)...)
}

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

// rewrite parses wasm and returns its rewritten form, or an error wrapping
// errUnsupported when the module is not one it can rewrite.
func rewrite(wasm []byte) (*layout, error) {
	const header = "\x00asm\x01\x00\x00\x00"
	if !bytes.HasPrefix(wasm, []byte(header)) {
		return nil, unsupported("not a wasm 1 binary")
	}
	var (
		l          = &layout{}
		out        = append(make([]byte, 0, len(wasm)+len(wasm)/16), header...)
		in         = reader{b: wasm[len(header):]}
		types      []string // the function types, encoded
		imports    imported
		mutable    []uint32 // indices of the mutable globals
		budget     uint32   // index of the yield budget
		globalsOut bool     // the global section has been written
		exported   bool     // the export section has been written
		haveMemory bool
		last       int
	)
	globalSection := func(existing []byte) error {
		var defined uint32
		var rest []byte
		if existing != nil {
			r := reader{b: existing}
			n, err := r.u32()
			if err != nil {
				return err
			}
			defined, rest = n, existing[r.off:]
		}
		budget = imports.globals + defined
		out = appendSection(out, secGlobal, appendU32(nil, defined+1), rest, budgetGlobal())
		globalsOut = true
		return nil
	}
	exportSection := func(existing []byte) error {
		names := map[string]bool{}
		var entries []byte
		n := uint32(0)
		if existing != nil {
			r := reader{b: existing}
			count, err := r.u32()
			if err != nil {
				return err
			}
			start := r.off
			for range count {
				name, err := r.name()
				if err != nil {
					return err
				}
				names[name] = true
				if _, err := r.byte(); err != nil {
					return err
				}
				if _, err := r.u32(); err != nil {
					return err
				}
			}
			if r.off != len(r.b) {
				return unsupported("export section: %d bytes left over", len(r.b)-r.off)
			}
			entries = append(entries, existing[start:]...)
			n = count
		}
		for _, idx := range mutable {
			name := globalExportPrefix + strconv.FormatUint(uint64(idx), 10)
			if names[name] {
				return unsupported("the module already exports %q", name)
			}
			entries = appendName(entries, name)
			entries = append(entries, 3) // global
			entries = appendU32(entries, idx)
			n++
			l.globals = append(l.globals, name)
		}
		out = appendSection(out, secExport, appendU32(nil, n), entries)
		exported = true
		return nil
	}
	// addMissing writes the global and export sections, if the module has
	// none, before a section that must come after them.
	addMissing := func(order int) error {
		if !globalsOut && order > sectionOrder(secGlobal) {
			if err := globalSection(nil); err != nil {
				return err
			}
		}
		if !exported && order > sectionOrder(secExport) {
			return exportSection(nil)
		}
		return nil
	}
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
			if err := addMissing(order); err != nil {
				return nil, err
			}
		}
		switch id {
		case secType:
			if types, err = parseTypes(body); err != nil {
				return nil, err
			}
		case secImport:
			if imports, err = parseImports(body); err != nil {
				return nil, err
			}
		case secMemory:
			if l.memoryMin, err = parseMemory(body); err != nil {
				return nil, err
			}
			haveMemory = true
		case secGlobal:
			if mutable, err = parseGlobals(body, imports.globals); err != nil {
				return nil, err
			}
			if err := globalSection(body); err != nil {
				return nil, err
			}
			continue
		case secExport:
			if err := exportSection(body); err != nil {
				return nil, err
			}
			continue
		case secStart:
			// It would run again in every instance started from a snapshot.
			return nil, unsupported("the module has a start function")
		case secCode:
			if !imports.hasYield || int(imports.yieldType) >= len(types) || types[imports.yieldType] != "\x60\x00\x01\x7f" {
				return nil, unsupported("the module does not import %s.%s as a function of no parameters and an i32 result", yieldModule, yieldName)
			}
			code, changes, err := instrumentCode(body, loopCheck(budget, imports.yield))
			if err != nil {
				return nil, err
			}
			l.changesTables = changes
			out = appendSection(out, secCode, code)
			continue
		case secData:
			if l.segments, err = parseData(body); err != nil {
				return nil, err
			}
			continue // dropped
		case secDataCount:
			out = appendSection(out, secDataCount, appendU32(nil, 0))
			continue
		}
		out = appendSection(out, id, body)
	}
	if err := addMissing(sectionOrder(secDataCount) + 1); err != nil {
		return nil, err
	}
	if !haveMemory {
		return nil, unsupported("the module defines no memory")
	}
	for i, s := range l.segments {
		if uint64(s.offset)+uint64(len(s.data)) > uint64(l.memoryMin)*pageSize {
			return nil, unsupported("data segment %d (at %d, %d bytes) lies outside the initial memory", i, s.offset, len(s.data))
		}
	}
	l.wasm = out
	return l, nil
}

// The import every loop of a rewritten module calls now and then.
const (
	yieldModule = "wasi_snapshot_preview1"
	yieldName   = "sched_yield"
)

// imported is what rewrite learns of a module's imports.
type imported struct {
	// globals is how many globals the module imports.
	globals uint32
	// yield is the function index of sched_yield, and yieldType its type,
	// when hasYield.
	yield, yieldType uint32
	hasYield         bool
}

// parseImports reads the import section. It refuses an imported memory (a
// snapshot maps the memory the module defines) and an imported mutable
// global (whose value lives outside the instance).
func parseImports(body []byte) (imported, error) {
	var im imported
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return im, err
	}
	var funcs uint32
	for range count {
		module, err := r.name()
		if err != nil {
			return im, err
		}
		name, err := r.name()
		if err != nil {
			return im, err
		}
		kind, err := r.byte()
		if err != nil {
			return im, err
		}
		switch kind {
		case 0: // function
			var typ uint32
			if typ, err = r.u32(); err == nil && module == yieldModule && name == yieldName && !im.hasYield {
				im.yield, im.yieldType, im.hasYield = funcs, typ, true
			}
			funcs++
		case 1: // table
			if _, err = r.byte(); err == nil {
				_, _, err = r.limits()
			}
		case 2:
			return im, unsupported("the module imports its memory")
		case 3:
			if _, err = r.byte(); err != nil {
				break
			}
			var mut byte
			if mut, err = r.byte(); err == nil && mut != 0 {
				return im, unsupported("the module imports a mutable global")
			}
			im.globals++
		default:
			return im, unsupported("import kind %d", kind)
		}
		if err != nil {
			return im, err
		}
	}
	return im, r.end("import")
}

// parseTypes returns the encoding of each function type.
func parseTypes(body []byte) ([]string, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return nil, err
	}
	types := make([]string, 0, count)
	for range count {
		start := r.off
		form, err := r.byte()
		if err != nil {
			return nil, err
		}
		if form != 0x60 {
			return nil, unsupported("a type of form 0x%02x", form)
		}
		for range 2 { // parameters, results
			n, err := r.u32()
			if err != nil {
				return nil, err
			}
			if _, err := r.bytes(n); err != nil {
				return nil, err
			}
		}
		types = append(types, string(r.b[start:r.off]))
	}
	return types, r.end("type")
}

// parseMemory returns the initial size of the module's one memory, in pages.
func parseMemory(body []byte) (uint32, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return 0, err
	}
	if count != 1 {
		return 0, unsupported("%d memories", count)
	}
	min, _, err := r.limits()
	if err != nil {
		return 0, err
	}
	return min, r.end("memory")
}

// parseGlobals returns the indices of the mutable globals the global
// section defines; imported is how many globals the module imports, which
// come first in the index space.
func parseGlobals(body []byte, imported uint32) ([]uint32, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return nil, err
	}
	var mutable []uint32
	for i := range count {
		valtype, err := r.byte()
		if err != nil {
			return nil, err
		}
		mut, err := r.byte()
		if err != nil {
			return nil, err
		}
		if _, _, err := r.constExpr(); err != nil {
			return nil, err
		}
		switch mut {
		case 0:
		case 1:
			switch valtype {
			case 0x7f, 0x7e, 0x7d, 0x7c: // i32, i64, f32, f64
			default:
				return nil, unsupported("a mutable global of type 0x%02x", valtype)
			}
			mutable = append(mutable, imported+i)
		default:
			return nil, unsupported("global mutability 0x%02x", mut)
		}
	}
	return mutable, r.end("global")
}

// parseData returns the data segments, which must all be active in memory 0
// at a constant offset.
func parseData(body []byte) ([]segment, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return nil, err
	}
	segs := make([]segment, 0, count)
	for i := range count {
		flags, err := r.u32()
		if err != nil {
			return nil, err
		}
		switch flags {
		case 0:
		case 2:
			mem, err := r.u32()
			if err != nil {
				return nil, err
			}
			if mem != 0 {
				return nil, unsupported("data segment %d is for memory %d", i, mem)
			}
		default:
			return nil, unsupported("data segment %d is passive", i)
		}
		op, v, err := r.constExpr()
		if err != nil {
			return nil, err
		}
		if op != 0x41 {
			return nil, unsupported("data segment %d has an offset that is not an i32.const", i)
		}
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		data, err := r.bytes(n)
		if err != nil {
			return nil, err
		}
		segs = append(segs, segment{offset: uint32(v), data: data})
	}
	if err := r.end("data"); err != nil {
		return nil, err
	}
	// Copied into one buffer of their own, so that they do not keep the
	// whole module alive.
	n := 0
	for _, s := range segs {
		n += len(s.data)
	}
	buf := make([]byte, 0, n)
	for i, s := range segs {
		buf = append(buf, s.data...)
		segs[i].data = buf[len(buf)-len(s.data) : len(buf) : len(buf)]
	}
	return segs, nil
}

// reader reads the wasm binary format. Its errors wrap errUnsupported: a
// module it cannot read is left to the runtime to judge.
type reader struct {
	b   []byte
	off int
}

var errTruncated = unsupported("truncated")

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) end(section string) error {
	if r.off != len(r.b) {
		return unsupported("%s section: %d bytes left over", section, len(r.b)-r.off)
	}
	return nil
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	b := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// u32 reads an unsigned LEB128 number of at most 32 bits.
func (r *reader) u32() (uint32, error) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			if v > 1<<32-1 {
				return 0, unsupported("a u32 out of range")
			}
			return uint32(v), nil
		}
	}
	return 0, unsupported("a u32 too long")
}

// sleb reads a signed LEB128 number of at most bits bits.
func (r *reader) sleb(bits int) (int64, error) {
	var v int64
	for shift := 0; shift < bits+7; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, nil
		}
	}
	return 0, unsupported("an s%d too long", bits)
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// limits reads a memory's or a table's limits.
func (r *reader) limits() (min uint32, max uint32, err error) {
	flag, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	if flag > 1 {
		return 0, 0, unsupported("limits of kind 0x%02x", flag)
	}
	if min, err = r.u32(); err != nil || flag == 0 {
		return min, 0, err
	}
	max, err = r.u32()
	return min, max, err
}

// constExpr reads a constant expression of one instruction and its end,
// and returns the instruction's opcode and, for i32.const and i64.const, its
// value.
func (r *reader) constExpr() (op byte, v int64, err error) {
	if op, err = r.byte(); err != nil {
		return 0, 0, err
	}
	switch op {
	case 0x41: // i32.const
		v, err = r.sleb(32)
	case 0x42: // i64.const
		v, err = r.sleb(64)
	case 0x43: // f32.const
		_, err = r.bytes(4)
	case 0x44: // f64.const
		_, err = r.bytes(8)
	case 0x23, 0xd2: // global.get, ref.func
		_, err = r.u32()
	case 0xd0: // ref.null
		_, err = r.byte()
	default:
		return 0, 0, unsupported("constant expression opcode 0x%02x", op)
	}
	if err != nil {
		return 0, 0, err
	}
	end, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	if end != 0x0b {
		return 0, 0, unsupported("a constant expression of more than one instruction")
	}
	return op, v, nil
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS32 appends v as a signed LEB128 number.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// appendSection appends a section made of the concatenation of parts.
func appendSection(b []byte, id byte, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b = appendU32(append(b, id), uint32(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
