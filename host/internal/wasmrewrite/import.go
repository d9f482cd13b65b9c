package wasmrewrite

// The import every loop of a rewritten module calls now and then: WASI's
// sched_yield, which every Go module imports.
const (
	YieldModule = "wasi_snapshot_preview1"
	YieldName   = "sched_yield"
)

// imported is what rewrite learns of a module's imports.
type imported struct {
	// globals and funcs are how many globals and functions the module
	// imports.
	globals, funcs uint32
	// yield is the function index of sched_yield, and yieldType its type,
	// when hasYield.
	yield, yieldType uint32
	hasYield         bool
}

// parseImports reads the import section. It refuses an imported memory (a
// snapshot maps the memory the module defines) and an imported mutable
// global (whose value lives outside the instance).
func parseImports(body []byte) (imported, error) {
	var im imported
	r := reader{b: body}
	count, err := r.u32()
	if err != nil {
		return im, err
	}
	for range count {
		module, err := r.name()
		if err != nil {
			return im, err
		}
		name, err := r.name()
		if err != nil {
			return im, err
		}
		kind, err := r.byte()
		if err != nil {
			return im, err
		}
		switch kind {
		case 0: // function
			var typ uint32
			if typ, err = r.u32(); err == nil && module == YieldModule && name == YieldName && !im.hasYield {
				im.yield, im.yieldType, im.hasYield = im.funcs, typ, true
			}
			im.funcs++
		case 1: // table
			if _, err = r.byte(); err == nil {
				_, _, err = r.limits()
			}
		case 2:
			return im, unsupported("the module imports its memory")
		case 3:
			if _, err = r.byte(); err != nil {
				break
			}
			var mut byte
			if mut, err = r.byte(); err == nil && mut != 0 {
				return im, unsupported("the module imports a mutable global")
			}
			im.globals++
		default:
			return im, unsupported("import kind %d", kind)
		}
		if err != nil {
			return im, err
		}
	}
	return im, r.end("import")
}

// ImportsYield reports whether the module wasm imports sched_yield
// (YieldModule.YieldName) as a function. read is false when its header or
// its sections up to the imports do not read, or its imports are ones
// Rewrite refuses: then the runtime's compiler says what is wrong.
func ImportsYield(wasm []byte) (yields, read bool) {
	if len(wasm) < 8 {
		return false, false
	}
	r := reader{b: wasm[8:]}
	for !r.done() {
		id, body, err := r.section()
		if err != nil {
			return false, false
		}
		if id != secImport {
			continue
		}
		im, err := parseImports(body)
		return im.hasYield, err == nil
	}
	return false, true
}
