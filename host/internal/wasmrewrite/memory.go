package wasmrewrite

// parseMemory returns the initial size of the module's one memory, in pages.
func parseMemory(body []byte) (uint32, error) {
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return 0, err
	}
	if count != 1 {
		return 0, unsupported("%d memories", count)
	}
	min, _, err := r.limits()
	if err != nil {
		return 0, err
	}
	return min, r.end("memory")
}
