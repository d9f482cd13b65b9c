package wasmrewrite

// functionSection writes the function section, with $charge appended when
// the module can yield (it cannot run otherwise: codeSection refuses it).
func (w *rewriter) functionSection(body []byte) error {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return err
	}
	start := r.off
	for range count {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	if err := r.end("function"); err != nil {
		return err
	}
	if !w.canYield() {
		w.out = appendSection(w.out, secFunction, body)
		return nil
	}
	w.charge, w.charging = w.imports.funcs+count, true
	w.out = appendSection(w.out, secFunction, appendU32(nil, count+1), body[start:], appendU32(nil, w.chargeType))
	return nil
}
