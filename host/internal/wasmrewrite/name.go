package wasmrewrite

// The name section (a custom section called "name"), of which the rewrite
// reads the function names, to find the functions it marks (timer.go):
// https://webassembly.github.io/spec/core/appendix/custom.html#name-section

// functionsNamed returns the function index of each of names that the name
// section of wasm (a wasm 1 binary, past its header) gives a function, with
// the index in names of its name. A module without a name section, or with
// one it cannot read, names none: the names serve the marks alone, and a
// module without them runs as well.
func functionsNamed(module []byte, names []string) map[uint32]int {
	want := map[string]int{}
	for i, n := range names {
		want[n] = i
	}
	in := reader{b: module}
	for !in.done() {
		id, body, err := in.section()
		if err != nil {
			return nil
		}
		if id != secCustom {
			continue
		}
		r := reader{b: body}
		if name, err := r.name(); err == nil && name == "name" {
			return functionNames(r, want)
		}
	}
	return nil
}

// functionNames reads the subsections of a name section, from r, and
// returns the function index of each name of want it finds, with want's
// value for it.
func functionNames(r reader, want map[string]int) map[uint32]int {
	for !r.done() {
		id, body, err := r.section()
		if err != nil {
			return nil
		}
		if id != 1 { // function names
			continue
		}
		sub := reader{b: body}
		count, err := sub.u32()
		if err != nil {
			return nil
		}
		found := map[uint32]int{}
		for range count {
			idx, err := sub.u32()
			if err != nil {
				return nil
			}
			name, err := sub.name()
			if err != nil {
				return nil
			}
			if i, ok := want[name]; ok {
				found[idx] = i
			}
		}
		return found
	}
	return nil
}
