package wasmrewrite

import "strconv"

// exportSection writes the export section: the module's exports (existing,
// the section's body, or nil when it has none), one for each mutable
// global, named GlobalExportPrefix and its index, and the yield budget, as
// BudgetExport.
func (w *rewriter) exportSection(existing []byte) error {
	names := map[string]bool{}
	var entries []byte
	n := uint32(0)
	if existing != nil {
		r := reader{b: existing}
		count, err := r.u32()
		if err != nil {
			return err
		}
		start := r.off
		for range count {
			name, err := r.name()
			if err != nil {
				return err
			}
			names[name] = true
			if _, err := r.byte(); err != nil {
				return err
			}
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		if err := r.end("export"); err != nil {
			return err
		}
		entries = append(entries, existing[start:]...)
		n = count
	}
	for _, idx := range w.mutable {
		name := GlobalExportPrefix + strconv.FormatUint(uint64(idx), 10)
		if names[name] {
			return unsupported("the module already exports %q", name)
		}
		entries = appendName(entries, name)
		entries = append(entries, 3) // global
		entries = appendU32(entries, idx)
		n++
		w.l.Globals = append(w.l.Globals, name)
	}
	if names[BudgetExport] {
		return unsupported("the module already exports %q", BudgetExport)
	}
	entries = appendName(entries, BudgetExport)
	entries = append(entries, 3) // global
	entries = appendU32(entries, w.budget)
	n++
	w.out = appendSection(w.out, secExport, appendU32(nil, n), entries)
	w.exported = true
	return nil
}
