package wasmrewrite

import "strconv"

// exportSection writes the export section: the module's exports (existing,
// the section's body, or nil when it has none), one for each mutable
// global, named GlobalExportPrefix and its index, the yield budget, as
// BudgetExport, and the globals of the timer marks, as TimerCallExport,
// TimerExport and TimerLiveExport.
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
	for _, g := range []struct {
		name string
		idx  uint32
	}{{BudgetExport, w.budget}, {TimerCallExport, w.timers.call}, {TimerExport, w.timers.timer}, {TimerLiveExport, w.timers.live}} {
		if names[g.name] {
			return unsupported("the module already exports %q", g.name)
		}
		entries = appendName(entries, g.name)
		entries = append(entries, 3) // global
		entries = appendU32(entries, g.idx)
		n++
	}
	w.out = appendSection(w.out, secExport, appendU32(nil, n), entries)
	w.exported = true
	return nil
}
