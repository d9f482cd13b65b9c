package sandbox

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/durabox/durabox/internal/guestbuild"
)

// sections splits a module into its sections, by id, in order.
func sections(t *testing.T, wasm []byte) (ids []byte, bodies [][]byte) {
	t.Helper()
	r := reader{b: wasm[8:]}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			t.Fatal(err)
		}
		n, err := r.u32()
		if err != nil {
			t.Fatal(err)
		}
		body, err := r.bytes(n)
		if err != nil {
			t.Fatal(err)
		}
		ids, bodies = append(ids, id), append(bodies, body)
	}
	return ids, bodies
}

// The rewritten Go guest, with its segments written into memory and before
// any code runs, is the original: same memory, same globals (and the
// yield budget, full), same exports; and every section but the global,
// export, code and data sections is unchanged.
func TestRewriteGoGuest(t *testing.T) {
	wasm, err := guestbuild.Wasm(guestPkg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := rewrite(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.segments) == 0 || len(l.globals) == 0 {
		t.Fatalf("%d segments and %d mutable globals", len(l.segments), len(l.globals))
	}

	ids, bodies := sections(t, wasm)
	newIDs, newBodies := sections(t, l.wasm)
	var want []byte
	for _, id := range ids {
		if id != secData {
			want = append(want, id)
		}
	}
	if !bytes.Equal(newIDs, want) {
		t.Fatalf("sections %v, want %v", newIDs, want)
	}
	for i, j := 0, 0; i < len(ids); i++ {
		if ids[i] == secData {
			continue
		}
		if ids[i] != secGlobal && ids[i] != secExport && ids[i] != secCode && !bytes.Equal(bodies[i], newBodies[j]) {
			t.Errorf("section %d (id %d) changed", j, ids[i])
		}
		j++
	}

	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	stubImports(t, rt, wasm)
	// start instantiates without running any code.
	start := func(wasm []byte, rewritten bool) (mem []byte, globals []uint64, exports []string) {
		cm, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := rt.InstantiateModule(ctx, cm, moduleConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Close(ctx)
		m := mod.Memory()
		b, _ := m.Read(0, m.Size())
		for name := range cm.ExportedFunctions() {
			exports = append(exports, name)
		}
		im := mod.(experimental.InternalModule)
		for i := range im.NumGlobal() {
			globals = append(globals, im.Global(i).Get())
		}
		for _, name := range l.globals {
			if _, ok := mod.ExportedGlobal(name).(api.MutableGlobal); rewritten && !ok {
				t.Errorf("global %q is not exported mutable", name)
			}
		}
		return bytes.Clone(b), globals, exports
	}
	orig, origGlobals, origExports := start(wasm, false)
	mem, globals, exports := start(l.wasm, true)
	for _, s := range l.segments {
		copy(mem[s.offset:], s.data)
	}
	if !bytes.Equal(mem, orig) {
		t.Error("the memory of the rewritten module with its segments written differs from the original's")
	}
	if len(exports) != len(origExports) {
		t.Errorf("%d exported functions, want %d", len(exports), len(origExports))
	}
	if !slices.Equal(globals, append(origGlobals, yieldEvery)) {
		t.Errorf("globals %v, want %v and the yield budget, %d", globals, origGlobals, yieldEvery)
	}
}

// refused reports whether the rewrite was to refuse the module (reason is
// not empty), failing t unless err is that refusal, or no error when none
// was to come.
func refused(t *testing.T, err error, reason string) bool {
	t.Helper()
	switch {
	case reason == "" && err != nil:
		t.Fatal(err)
	case reason != "" && (!errors.Is(err, errUnsupported) || !strings.HasSuffix(err.Error(), reason)):
		t.Fatalf("err = %v, want %q", err, reason)
	}
	return reason != ""
}

// exportedGlobals lists the names of the globals wasm exports.
func exportedGlobals(t *testing.T, wasm []byte) []string {
	t.Helper()
	ids, bodies := sections(t, wasm)
	i := slices.Index(ids, secExport)
	if i < 0 {
		return nil
	}
	r := reader{b: bodies[i]}
	n, err := r.u32()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for range n {
		var name string
		var kind byte
		if name, err = r.name(); err == nil {
			if kind, err = r.byte(); err == nil {
				_, err = r.u32()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if kind == 3 {
			names = append(names, name)
		}
	}
	return names
}

// stubImports provides every function wasm imports, doing nothing, so that
// the module can be instantiated without the host.
func stubImports(t *testing.T, rt wazero.Runtime, wasm []byte) {
	t.Helper()
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	byModule := map[string]wazero.HostModuleBuilder{}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		b, ok := byModule[mod]
		if !ok {
			b = rt.NewHostModuleBuilder(mod)
			byModule[mod] = b
		}
		b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(context.Context, []uint64) {}), f.ParamTypes(), f.ResultTypes()).Export(name)
	}
	for _, b := range byModule {
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// module assembles a module from its sections, given as id and body.
func module(sections ...any) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for i := 0; i < len(sections); i += 2 {
		b = appendSection(b, byte(sections[i].(int)), []byte(sections[i+1].(string)))
	}
	return b
}

// Sections of a small reactor: type 0 is () -> (), type 1 () -> i32;
// function 0 is WASI's sched_yield, imported; function 1 has type 0, and
// its body is empty; the code section is last before data.
const (
	typeSec     = "\x02\x60\x00\x00\x60\x00\x01\x7f"
	yieldImport = "\x16wasi_snapshot_preview1\x0bsched_yield\x00\x01"
	importSec   = "\x01" + yieldImport
	funcSec     = "\x01\x00"
	memorySec   = "\x01\x00\x01" // one memory of one page
	exportSec   = "\x01\x0b_initialize\x00\x01"
	globalSec   = "\x02\x7f\x01\x41\x2a\x0b\x7e\x00\x42\x07\x0b" // mutable i32 = 42, immutable i64 = 7
	codeSec     = "\x01\x02\x00\x0b"
	activeData  = "\x01\x00\x41\x10\x0b\x03abc" // "abc" at 16
	passiveData = "\x01\x01\x03abc"
)

func TestRewrite(t *testing.T) {
	tests := []struct {
		name string
		wasm []byte
		// unsupported is the reason given, or empty when the rewrite works.
		unsupported string
		segments    []segment
		globals     []string
	}{
		{"active data and a mutable global",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 6, globalSec, 7, exportSec, 10, codeSec, 11, activeData),
			"", []segment{{16, []byte("abc")}}, []string{"durabox:global:0"}},
		{"no data",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 10, codeSec),
			"", nil, nil},
		{"an imported global shifts the indices",
			module(1, typeSec, 2, "\x02"+yieldImport+"\x01m\x01g\x03\x7f\x00", 3, funcSec, 5, memorySec, 6, globalSec, 7, exportSec, 10, codeSec),
			"", nil, []string{"durabox:global:1"}},
		{"no export section to add to",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 6, globalSec, 10, codeSec),
			"", nil, []string{"durabox:global:0"}},
		{"passive data",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 10, codeSec, 11, passiveData),
			"data segment 0 is passive", nil, nil},
		{"data outside the initial memory",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 10, codeSec, 11, "\x01\x00\x41\xff\xff\x03\x0b\x03abc"),
			"data segment 0 (at 65535, 3 bytes) lies outside the initial memory", nil, nil},
		{"no memory",
			module(1, typeSec, 2, importSec, 3, funcSec, 7, exportSec, 10, codeSec),
			"the module defines no memory", nil, nil},
		{"imported memory",
			module(1, typeSec, 2, "\x02"+yieldImport+"\x01m\x01m\x02\x00\x01", 3, funcSec, 7, exportSec, 10, codeSec),
			"the module imports its memory", nil, nil},
		{"start function",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 8, "\x00", 10, codeSec),
			"the module has a start function", nil, nil},
		{"truncated", module(1, typeSec)[:12], "truncated", nil, nil},
		{"export name taken",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 6, globalSec, 7, "\x01\x10durabox:global:0\x00\x00", 10, codeSec),
			`the module already exports "durabox:global:0"`, nil, nil},
		{"no sched_yield to call",
			module(1, typeSec, 3, funcSec, 5, memorySec, 7, "\x01\x0b_initialize\x00\x00", 10, codeSec),
			"the module does not import wasi_snapshot_preview1.sched_yield as a function of no parameters and an i32 result", nil, nil},
		{"a sched_yield of another type",
			module(1, typeSec, 2, "\x01\x16wasi_snapshot_preview1\x0bsched_yield\x00\x00", 3, funcSec, 5, memorySec, 7, exportSec, 10, codeSec),
			"the module does not import wasi_snapshot_preview1.sched_yield as a function of no parameters and an i32 result", nil, nil},
		{"an instruction it does not know",
			module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 10, "\x01\x03\x00\x14\x0b"),
			"function body 0: no snapshot: opcode 0x14 at byte 1", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := rewrite(tt.wasm)
			if refused(t, err, tt.unsupported) {
				return
			}
			if len(l.segments) != len(tt.segments) {
				t.Fatalf("segments %v, want %v", l.segments, tt.segments)
			}
			for i := range l.segments {
				if l.segments[i].offset != tt.segments[i].offset || !bytes.Equal(l.segments[i].data, tt.segments[i].data) {
					t.Errorf("segment %d: %v, want %v", i, l.segments[i], tt.segments[i])
				}
			}
			if strings.Join(l.globals, " ") != strings.Join(tt.globals, " ") {
				t.Errorf("globals %q, want %q", l.globals, tt.globals)
			}
			if _, err := wazero.NewRuntime(ctx).CompileModule(ctx, l.wasm); err != nil {
				t.Fatalf("the rewritten module does not compile: %v", err)
			}
			if got := exportedGlobals(t, l.wasm); !slices.Equal(got, tt.globals) {
				t.Errorf("exported globals %q, want %q", got, tt.globals)
			}
		})
	}
}

// A module the rewrite cannot handle, or whose rewritten form does not
// validate, is compiled as is, and works as it always did, also when an
// instance asks for a snapshot.
func TestCompileFallsBack(t *testing.T) {
	rt, err := NewWazero(ctx, WazeroOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	tests := []struct {
		name string
		wasm []byte
	}{
		{"passive data", module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 10, codeSec, 11, passiveData)},
		// memory.init 0 needs the segment that the rewrite takes out.
		{"memory.init", module(1, typeSec, 2, importSec, 3, funcSec, 5, memorySec, 7, exportSec, 12, "\x01",
			10, "\x01\x0c\x00\x41\x00\x41\x00\x41\x00\xfc\x08\x00\x00\x0b", 11, activeData)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod, err := rt.Compile(ctx, tt.wasm)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close(ctx)
			if l := mod.(*wazeroModule).layout; l != nil {
				t.Fatal("compiled rewritten")
			}
			for _, snap := range []bool{false, true} {
				inst, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: snap})
				if err != nil {
					t.Fatal(err)
				}
				inst.Close(ctx)
			}
		})
	}
}
