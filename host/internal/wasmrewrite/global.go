package wasmrewrite

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

// globalSection writes the global section: the module's globals (existing,
// the section's body, or nil when it has none), and after them the yield
// budget and the globals of the timer marks (timer.go).
func (w *rewriter) globalSection(existing []byte) error {
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
	w.budget = w.imports.globals + defined
	w.timers = timerGlobalsAt{call: w.budget + 1, timer: w.budget + 2, live: w.budget + 3}
	w.out = appendSection(w.out, secGlobal, appendU32(nil, defined+4), rest, budgetGlobal(), timerGlobals())
	w.globalsOut = true
	return nil
}
