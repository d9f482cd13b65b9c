package sandbox

// A call must stop when its context ends, even in an endless loop, and
// meanwhile must not hold up the host: Go's runtime cannot preempt compiled
// guest code, and a garbage collection waits until every goroutine it runs
// on comes to a stop. wazero can stop a call itself
// (WithCloseOnContextDone), and does it by leaving the compiled code for Go
// at every loop header; but a Go guest enters a loop in every function it
// calls, so that made guest code four to five times slower. A rewritten
// module does it every yieldEvery loop iterations instead: the rewrite adds
// a mutable i32 global, the budget, and at the top of every loop body
// inserts
//
//	global.get $budget
//	i32.eqz
//	if
//	  call $sched_yield     ;; the module's own import of WASI's sched_yield
//	  drop
//	  i32.const yieldEvery
//	  global.set $budget
//	end
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//
// sched_yield is a host function (package wasi): calling it goes through Go,
// where the runtime can stop the goroutine, and it stops the call, with its
// context's error, once that context has ended. The check changes nothing
// the guest can see: the budget is the rewrite's own, sched_yield answers
// success and does nothing else, and what the check pushes it consumes. A
// module that does not import sched_yield (every Go module does) is not
// rewritten, and runs on the guarded runtime.

// yieldEvery is how many loop iterations run between two yields: about a
// tenth of a millisecond of guest code, so a call stops within that of its
// context's end, and the host's garbage collector waits no longer.
const yieldEvery = 1 << 14

// budgetGlobal returns the budget's entry in the global section: a
// mutable i32, yieldEvery at start.
func budgetGlobal() []byte {
	b := []byte{0x7f, 0x01, 0x41} // i32, mutable, i32.const
	return append(appendS32(b, yieldEvery), 0x0b)
}

// loopCheck returns the instructions inserted at the top of every loop
// body, for the budget at global index budget and sched_yield at function
// index yield.
func loopCheck(budget, yield uint32) []byte {
	b := appendU32([]byte{0x23}, budget)  // global.get
	b = append(b, 0x45, 0x04, 0x40)       // i32.eqz, if (no result)
	b = appendU32(append(b, 0x10), yield) // call
	b = append(b, 0x1a, 0x41)             // drop, i32.const
	b = appendS32(b, yieldEvery)
	b = appendU32(append(b, 0x24), budget) // global.set
	b = append(b, 0x0b)                    // end
	b = appendU32(append(b, 0x23), budget) // global.get
	b = append(b, 0x41, 0x01, 0x6b)        // i32.const 1, i32.sub
	return appendU32(append(b, 0x24), budget)
}

// instrumentCode returns the code section with check inserted at the top
// of every loop body, and whether any function changes a table (which keeps
// the module's instances from being reused: see recycle.go).
func instrumentCode(section, check []byte) (code []byte, changesTables bool, err error) {
	r := reader{b: section}
	count, err := r.u32()
	if err != nil {
		return nil, false, err
	}
	out := appendU32(make([]byte, 0, len(section)+len(section)/16), count)
	var body []byte
	for i := range count {
		size, err := r.u32()
		if err != nil {
			return nil, false, err
		}
		fn, err := r.bytes(size)
		if err != nil {
			return nil, false, err
		}
		var changes bool
		if body, changes, err = instrumentBody(body[:0], fn, check); err != nil {
			return nil, false, unsupported("function body %d: %w", i, err)
		}
		changesTables = changesTables || changes
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out, changesTables, r.end("code")
}

// instrumentBody appends to out the function body code with check after
// every loop instruction, and reports whether the body changes a table.
func instrumentBody(out, code, check []byte) (_ []byte, changesTables bool, err error) {
	r := reader{b: code}
	groups, err := r.u32()
	if err != nil {
		return nil, false, err
	}
	for range groups { // locals: a count and a value type each
		if err := r.skipLEB(); err != nil {
			return nil, false, err
		}
		if _, err := r.byte(); err != nil {
			return nil, false, err
		}
	}
	copied := 0
	for !r.done() {
		op, err := r.byte()
		if err != nil {
			return nil, false, err
		}
		if op == 0x26 || op == 0xfc && r.changesTable() {
			changesTables = true
		}
		if err := r.skipImmediates(op); err != nil {
			return nil, false, err
		}
		if op == 0x03 { // loop
			out = append(out, code[copied:r.off]...)
			out = append(out, check...)
			copied = r.off
		}
	}
	return append(out, code[copied:]...), changesTables, nil
}

// changesTable reports, at the sub-opcode of a 0xfc instruction, whether
// the instruction is table.init, table.copy, table.grow or table.fill. It
// reads nothing.
func (r *reader) changesTable() bool {
	peek := *r
	sub, err := peek.u32()
	return err == nil && (sub == 12 || sub == 14 || sub == 15 || sub == 17)
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
