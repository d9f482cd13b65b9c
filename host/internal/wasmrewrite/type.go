package wasmrewrite

import "slices"

// parseTypes returns the encoding of each function type.
func parseTypes(body []byte) ([]string, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return nil, err
	}
	types := make([]string, 0, min(count, uint32(len(body)))) // a count is not to be trusted
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

// typeSection writes the type section, with $charge's type appended unless
// the module has it already, and notes its index.
func (w *rewriter) typeSection(body []byte) error {
	var err error
	if w.types, err = parseTypes(body); err != nil {
		return err
	}
	if i := slices.Index(w.types, chargeType); i >= 0 {
		w.chargeType = uint32(i)
		w.out = appendSection(w.out, secType, body)
		return nil
	}
	r := reader{b: body}
	if _, err := r.u32(); err != nil {
		return err
	}
	w.chargeType = uint32(len(w.types))
	w.types = append(w.types, chargeType)
	w.out = appendSection(w.out, secType, appendU32(nil, w.chargeType+1), body[r.off:], []byte(chargeType))
	return nil
}
