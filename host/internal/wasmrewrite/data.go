package wasmrewrite

// parseData returns the data segments, which must all be active in memory 0
// at a constant offset.
func parseData(body []byte) ([]Segment, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return nil, err
	}
	segs := make([]Segment, 0, min(count, uint32(len(body)))) // a count is not to be trusted
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
		segs = append(segs, Segment{Offset: uint32(v), Data: data})
	}
	if err := r.end("data"); err != nil {
		return nil, err
	}
	// Copied into one buffer of their own, so that they do not keep the
	// whole module alive.
	n := 0
	for _, s := range segs {
		n += len(s.Data)
	}
	buf := make([]byte, 0, n)
	for i, s := range segs {
		buf = append(buf, s.Data...)
		segs[i].Data = buf[len(buf)-len(s.Data) : len(buf) : len(buf)]
	}
	return segs, nil
}
