package wasmrewrite

// changesTable reports, at the sub-opcode of a 0xfc instruction, whether
// the instruction is table.init, table.copy, table.grow or table.fill. It
// reads nothing.
func (r *reader) changesTable() bool {
	peek := *r
	sub, err := peek.u32()
	return err == nil && (sub == 12 || sub == 14 || sub == 15 || sub == 17)
}

// usesSegments reports, at the sub-opcode of a 0xfc instruction, whether
// the instruction is memory.init or data.drop. It reads nothing.
func (r *reader) usesSegments() bool {
	peek := *r
	sub, err := peek.u32()
	return err == nil && (sub == 8 || sub == 9)
}

// skipImmediates reads past the immediates of the instruction op. It knows
// the instructions of WebAssembly 2.0 (with SIMD), tail calls, threads and
// exception handling with try_table; any other opcode is refused, and the
// module is compiled as is.
func (r *reader) skipImmediates(op byte) error {
	switch {
	case op <= 0x01, op == 0x05, op == 0x0a, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b, op == 0xd1,
		op >= 0x45 && op <= 0xc4:
		// unreachable, nop, else, throw_ref, end, return, drop, select,
		// ref.is_null, and the numeric instructions: no immediates.
		return nil
	case op >= 0x02 && op <= 0x04: // block, loop, if
		_, err := r.sleb(33)
		return err
	case op == 0x08, op == 0x0c, op == 0x0d, op == 0x10, op == 0x12, op == 0xd2,
		op >= 0x20 && op <= 0x26, op == 0x3f, op == 0x40:
		// throw, br, br_if, call, return_call, ref.func, local.*, global.*,
		// table.get, table.set, memory.size, memory.grow: one index.
		return r.skipLEB()
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
		return r.skipLEBs(2)
	case op == 0x0e: // br_table
		n, err := r.u32()
		if err != nil {
			return err
		}
		return r.skipLEBs(int(n) + 1)
	case op == 0x1c: // select with types
		n, err := r.u32()
		if err != nil {
			return err
		}
		_, err = r.bytes(n)
		return err
	case op == 0x1f: // try_table
		return r.skipTryTable()
	case op >= 0x28 && op <= 0x3e: // loads and stores
		return r.skipMemarg()
	case op == 0x41: // i32.const
		_, err := r.sleb(32)
		return err
	case op == 0x42: // i64.const
		_, err := r.sleb(64)
		return err
	case op == 0x43: // f32.const
		_, err := r.bytes(4)
		return err
	case op == 0x44: // f64.const
		_, err := r.bytes(8)
		return err
	case op == 0xd0: // ref.null
		_, err := r.sleb(33)
		return err
	case op == 0xfc:
		return r.skipMisc()
	case op == 0xfd:
		return r.skipSIMD()
	case op == 0xfe:
		return r.skipAtomic()
	}
	return unsupported("opcode 0x%02x at byte %d", op, r.off-1)
}

// skipTryTable reads past try_table's block type and catch clauses.
func (r *reader) skipTryTable() error {
	if _, err := r.sleb(33); err != nil {
		return err
	}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for range n {
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00, 0x01: // catch, catch_ref: a tag and a label
			err = r.skipLEBs(2)
		case 0x02, 0x03: // catch_all, catch_all_ref: a label
			err = r.skipLEB()
		default:
			return unsupported("try_table catch kind 0x%02x", kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// skipMisc reads past an instruction of the 0xfc prefix.
func (r *reader) skipMisc() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // saturating truncations
		return nil
	case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17:
		// data.drop, memory.fill, elem.drop, table.grow, table.size,
		// table.fill: one index.
		return r.skipLEB()
	case sub == 8, sub == 10, sub == 12, sub == 14:
		// memory.init, memory.copy, table.init, table.copy: two indices.
		return r.skipLEBs(2)
	}
	return unsupported("opcode 0xfc %d", sub)
}

// skipSIMD reads past an instruction of the 0xfd prefix.
func (r *reader) skipSIMD() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11, sub == 92, sub == 93: // loads and stores
		return r.skipMemarg()
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		_, err := r.bytes(16)
		return err
	case sub >= 21 && sub <= 34: // extract and replace lane
		_, err := r.byte()
		return err
	case sub >= 84 && sub <= 91: // load and store lane
		if err := r.skipMemarg(); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	case sub <= 0x113:
		return nil
	}
	return unsupported("opcode 0xfd %d", sub)
}

// skipAtomic reads past an instruction of the 0xfe prefix.
func (r *reader) skipAtomic() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub == 0x03: // atomic.fence
		_, err := r.byte()
		return err
	case sub <= 0x4e:
		return r.skipMemarg()
	}
	return unsupported("opcode 0xfe %d", sub)
}

// skipMemarg reads past a memory argument: its alignment (whose bit 6 says
// a memory index follows) and its offset.
func (r *reader) skipMemarg() error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		if err := r.skipLEB(); err != nil {
			return err
		}
	}
	return r.skipLEB()
}

// skipLEB reads past one LEB128 number of up to 64 bits.
func (r *reader) skipLEB() error {
	for range 10 {
		b, err := r.byte()
		if err != nil {
			return err
		}
		if b&0x80 == 0 {
			return nil
		}
	}
	return unsupported("a number too long")
}

// skipLEBs reads past n LEB128 numbers.
func (r *reader) skipLEBs(n int) error {
	for range n {
		if err := r.skipLEB(); err != nil {
			return err
		}
	}
	return nil
}
