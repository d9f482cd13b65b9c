package wasmrewrite

import "fmt"

// A call must stop when its context ends, even in an endless loop, and
// meanwhile must not hold up the host (see the sandbox's yield.go). So the
// rewrite adds a mutable i32 global, the budget, and at the top of every
// loop body inserts
//
//	global.get $budget
//	i32.eqz
//	if
//	  call $sched_yield     ;; the module's own import of WASI's sched_yield
//	  drop
//	  i32.const YieldEvery
//	  global.set $budget
//	end
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//
// The check changes nothing the guest can see: the budget is the rewrite's
// own, sched_yield answers success and does nothing else, and what the
// check pushes it consumes. A module that does not import sched_yield
// (every Go module does) is refused.

// YieldEvery is how many loop iterations run between two yields: about a
// tenth of a millisecond of guest code, so a call stops within that of its
// context's end, and the host's garbage collector waits no longer.
const YieldEvery = 1 << 14

// budgetGlobal returns the budget's entry in the global section: a
// mutable i32, YieldEvery at start.
func budgetGlobal() []byte {
	b := []byte{0x7f, 0x01, 0x41} // i32, mutable, i32.const
	return append(appendS32(b, YieldEvery), 0x0b)
}

// loopCheck returns the instructions inserted at the top of every loop
// body, for the budget at global index budget and sched_yield at function
// index yield.
func loopCheck(budget, yield uint32) []byte {
	b := appendU32([]byte{0x23}, budget)  // global.get
	b = append(b, 0x45, 0x04, 0x40)       // i32.eqz, if (no result)
	b = appendU32(append(b, 0x10), yield) // call
	b = append(b, 0x1a, 0x41)             // drop, i32.const
	b = appendS32(b, YieldEvery)
	b = appendU32(append(b, 0x24), budget) // global.set
	b = append(b, 0x0b)                    // end
	b = appendU32(append(b, 0x23), budget) // global.get
	b = append(b, 0x41, 0x01, 0x6b)        // i32.const 1, i32.sub
	return appendU32(append(b, 0x24), budget)
}

// instrumentCode returns the code section with check inserted at the top
// of every loop body, call (when not nil) before every bulk instruction
// (charge.go) and marks[i] after the stack check of function body i (see
// timer.go; stackChecks holds the functions a stack check calls), and body
// appended (when not nil); and whether any function changes a table (which
// keeps the module's instances from being reused: see recycle.go).
func instrumentCode(section, check, call, body []byte, marks map[uint32][]byte, stackChecks map[uint32]bool) (code []byte, changesTables bool, err error) {
	r := reader{b: section}
	count, err := r.u32()
	if err != nil {
		return nil, false, err
	}
	total := count
	if body != nil {
		total++
	}
	out := appendU32(make([]byte, 0, len(section)+len(section)/16+len(body)), total)
	var fn []byte
	for i := range count {
		size, err := r.u32()
		if err != nil {
			return nil, false, err
		}
		code, err := r.bytes(size)
		if err != nil {
			return nil, false, err
		}
		var changes bool
		site := &markSite{stackChecks: stackChecks, placed: marks[i] == nil}
		if fn, changes, err = instrumentBody(fn[:0], code, check, call, marks[i], site); err != nil {
			return nil, false, fmt.Errorf("function body %d: %w", i, err)
		}
		changesTables = changesTables || changes
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	return append(out, body...), changesTables, r.end("code")
}

// instrumentBody appends to out the function body code with check after
// every loop instruction, call (when not nil) before every bulk
// instruction and mark where site says, and reports whether the body
// changes a table.
func instrumentBody(out, code, check, call, mark []byte, site *markSite) (_ []byte, changesTables bool, err error) {
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
		start := r.off
		op, err := r.byte()
		if err != nil {
			return nil, false, err
		}
		if op == 0x26 || op == 0xfc && r.changesTable() {
			changesTables = true
		}
		if op == 0xfc && r.usesSegments() {
			return nil, false, unsupported("memory.init or data.drop at byte %d needs the data segments the rewrite takes out", r.off-1)
		}
		if op == 0xfc && call != nil && r.charged() {
			out = append(out, code[copied:start]...)
			out = append(out, call...)
			copied = start
		}
		if err := r.skipImmediates(op); err != nil {
			return nil, false, err
		}
		if op == 0x03 { // loop
			out = append(out, code[copied:r.off]...)
			out = append(out, check...)
			copied = r.off
		}
		if site.after(op, code[start+1:r.off]) {
			out = append(out, code[copied:r.off]...)
			out = append(out, mark...)
			copied = r.off
		}
	}
	return append(out, code[copied:]...), changesTables, nil
}

// canYield reports whether the module imports sched_yield as a function of
// no parameters and an i32 result, for the loops to call.
func (w *rewriter) canYield() bool {
	im := w.imports
	return im.hasYield && int(im.yieldType) < len(w.types) && w.types[im.yieldType] == "\x60\x00\x01\x7f"
}

// codeSection writes the code section with the loop check in every
// function, the call to $charge before every bulk instruction, and
// $charge itself, when the function section declared it.
func (w *rewriter) codeSection(body []byte) error {
	if !w.canYield() {
		return unsupported("the module does not import %s.%s as a function of no parameters and an i32 result", YieldModule, YieldName)
	}
	marks, checks := map[uint32][]byte{}, map[uint32]bool{}
	for fn, i := range w.marked {
		switch {
		case i >= len(TimerCalls)+len(timerStops):
			checks[fn] = true
		case fn >= w.imports.funcs:
			marks[fn-w.imports.funcs] = w.timers.mark(i)
		}
	}
	var call, charge []byte
	if w.charging {
		call, charge = chargeCall(w.charge), chargeBody(w.budget, w.imports.yield)
	}
	code, changes, err := instrumentCode(body, loopCheck(w.budget, w.imports.yield), call, charge, marks, checks)
	if err != nil {
		return err
	}
	w.l.ChangesTables = changes
	w.out = appendSection(w.out, secCode, code)
	w.coded = true
	return nil
}
