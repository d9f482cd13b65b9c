package wasmrewrite

// reader reads the wasm binary format. Its errors wrap ErrUnsupported: a
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

// section reads a section, or a subsection of a custom section: an id, a
// size and that many bytes.
func (r *reader) section() (id byte, body []byte, err error) {
	if id, err = r.byte(); err != nil {
		return 0, nil, err
	}
	size, err := r.u32()
	if err != nil {
		return 0, nil, err
	}
	body, err = r.bytes(size)
	return id, body, err
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
