package wasmrewrite

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
