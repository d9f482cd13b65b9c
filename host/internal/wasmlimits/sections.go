package wasmlimits

import "fmt"

// The items of each section, read as the decoder reads them
// (https://webassembly.github.io/spec/core/binary/modules.html, and the
// proposals wazero reads: reference types, a rec group of function
// types).

// Reference type prefixes: a heap type (an s33) follows.
const (
	refNullable    = 0x63
	refNonNullable = 0x64
)

// funcType reads a type: a function type, or a rec group of them.
func (r *reader) funcType() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b == 0x4e {
		return r.vector("types of a rec group", r.plainFuncType)
	}
	r.off--
	return r.plainFuncType()
}

func (r *reader) plainFuncType() error {
	b, err := r.byte()
	switch {
	case err != nil:
		return err
	case b != 0x60:
		return fmt.Errorf("a type of form 0x%02x, not a function type", b)
	}
	if err := r.vector("parameters", r.valType); err != nil {
		return err
	}
	return r.vector("results", r.valType)
}

// valType reads a value type, or a reference type.
func (r *reader) valType() error {
	b, err := r.byte()
	if err == nil && (b == refNullable || b == refNonNullable) {
		_, err = r.leb(5)
	}
	return err
}

func (r *reader) importDesc() error {
	if err := r.name(); err != nil {
		return err
	}
	if err := r.name(); err != nil {
		return err
	}
	kind, err := r.byte()
	if err != nil {
		return err
	}
	switch kind {
	case 0:
		return r.u32()
	case 1:
		return r.table()
	case 2:
		_, err := r.limits()
		return err
	case 3:
		return r.globalType()
	}
	return fmt.Errorf("an import of kind 0x%02x", kind)
}

// table reads a table type, with an initial value if it has one, and
// refuses one of more than MaxTableElements elements.
func (r *reader) table() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	withInit := b == 0x40
	if withInit {
		if _, err := r.bytes(1); err != nil {
			return err
		}
		if b, err = r.byte(); err != nil {
			return err
		}
	}
	if b == refNullable || b == refNonNullable {
		if _, err := r.leb(5); err != nil {
			return err
		}
	}
	elements, err := r.limits()
	switch {
	case err != nil:
		return err
	case elements > MaxTableElements:
		return fmt.Errorf("a table of %d elements, past the limit of %d", elements, MaxTableElements)
	case withInit:
		return r.constExpr()
	}
	return nil
}

// limits reads a memory's or a table's limits, and returns its minimum.
func (r *reader) limits() (uint32, error) {
	flag, err := r.byte()
	if err != nil {
		return 0, err
	}
	if flag > 3 {
		return 0, fmt.Errorf("limits of kind 0x%02x", flag)
	}
	minimum, err := r.uint()
	if err == nil && flag&1 == 1 {
		err = r.u32()
	}
	return minimum, err
}

func (r *reader) globalType() error {
	if err := r.valType(); err != nil {
		return err
	}
	_, err := r.byte()
	return err
}

func (r *reader) global() error {
	if err := r.globalType(); err != nil {
		return err
	}
	return r.constExpr()
}

func (r *reader) export() error {
	if err := r.name(); err != nil {
		return err
	}
	if _, err := r.byte(); err != nil {
		return err
	}
	return r.u32()
}

// element reads an element segment, in each of its eight forms.
func (r *reader) element() error {
	form, err := r.uint()
	if err != nil {
		return err
	}
	if form > 7 {
		return fmt.Errorf("an element segment of form %d", form)
	}
	if form == 2 || form == 6 {
		if err := r.u32(); err != nil { // the table
			return err
		}
	}
	if form&1 == 0 { // active: an offset
		if err := r.constExpr(); err != nil {
			return err
		}
	}
	if form != 0 && form != 4 { // the element kind, or type
		if err := r.refType(form); err != nil {
			return err
		}
	}
	if form < 4 {
		return r.vector("function indexes", r.u32)
	}
	return r.vector("expressions", r.constExpr)
}

// refType reads an element segment's element kind (forms 1 to 3) or
// reference type (forms 5 to 7).
func (r *reader) refType(form uint32) error {
	b, err := r.byte()
	if err == nil && form > 4 && (b == refNullable || b == refNonNullable) {
		_, err = r.leb(5)
	}
	return err
}

// code reads a function's body: its locals, at most MaxLocals, and the
// bytes of its code.
func (r *reader) code() error {
	size, err := r.size("bytes of a function body")
	if err != nil {
		return err
	}
	start := r.off
	locals := 0
	err = r.vector("local declarations", func() error {
		n, err := r.uint()
		if err != nil {
			return err
		}
		if locals += int(n); locals > MaxLocals {
			return fmt.Errorf("more than %d locals, the limit", MaxLocals)
		}
		return r.valType()
	})
	if err != nil {
		return err
	}
	code := int(size) - (r.off - start)
	if code < 0 {
		return fmt.Errorf("a body of %d bytes, whose locals take %d", size, r.off-start)
	}
	_, err = r.bytes(code)
	return err
}

// data reads a data segment, in each of its three forms.
func (r *reader) data() error {
	form, err := r.uint()
	if err != nil {
		return err
	}
	switch form {
	case 2:
		if err := r.u32(); err != nil { // the memory
			return err
		}
		fallthrough
	case 0:
		if err := r.constExpr(); err != nil {
			return err
		}
	case 1:
	default:
		return fmt.Errorf("a data segment of form %d", form)
	}
	n, err := r.size("bytes of data")
	if err != nil {
		return err
	}
	_, err = r.bytes(int(n))
	return err
}
