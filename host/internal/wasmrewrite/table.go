package wasmrewrite

// parseTables reads the table section. It refuses a table of 64-bit
// indices (and any limits but the two of wasm 2.0): $charge takes a bulk
// table instruction's length as an i32 (charge.go).
func parseTables(body []byte) error {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return err
	}
	for range count {
		if _, err := r.byte(); err != nil { // the element type
			return err
		}
		if _, _, err := r.limits(); err != nil {
			return err
		}
	}
	return r.end("table")
}
