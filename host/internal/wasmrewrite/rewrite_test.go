package wasmrewrite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
	"github.com/durabox/durabox/internal/guestbuild"
)

var ctx = context.Background()

// guestPkg is a Go guest, the sandbox's test guest.
const guestPkg = "host/internal/sandbox/testdata/guest"

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

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
// yield budget, full, and the timer marks' globals, zero), same exports;
// every section but the function, global, export, code and data sections
// is unchanged (a Go module has $charge's type already); and the function
// section has gained $charge, of that type.
func TestRewriteGoGuest(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm(guestPkg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Rewrite(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Segments) == 0 || len(l.Globals) == 0 {
		t.Fatalf("%d segments and %d mutable globals", len(l.Segments), len(l.Globals))
	}

	ids, bodies := sections(t, wasm)
	newIDs, newBodies := sections(t, l.Wasm)
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
		switch ids[i] {
		case secFunction:
			r := reader{b: bodies[i]}
			n, err := r.u32()
			if err != nil {
				t.Fatal(err)
			}
			types, err := parseTypes(bodies[slices.Index(ids, secType)])
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Concat(appendU32(nil, n+1), bodies[i][r.off:], appendU32(nil, uint32(slices.Index(types, chargeType))))
			if !bytes.Equal(newBodies[j], want) {
				t.Errorf("the function section does not end in $charge, of type (i32) -> (i32)")
			}
		case secGlobal, secExport, secCode:
		default:
			if !bytes.Equal(bodies[i], newBodies[j]) {
				t.Errorf("section %d (id %d) changed", j, ids[i])
			}
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
		mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
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
		for _, name := range l.Globals {
			if _, ok := mod.ExportedGlobal(name).(api.MutableGlobal); rewritten && !ok {
				t.Errorf("global %q is not exported mutable", name)
			}
		}
		return bytes.Clone(b), globals, exports
	}
	orig, origGlobals, origExports := start(wasm, false)
	mem, globals, exports := start(l.Wasm, true)
	for _, s := range l.Segments {
		copy(mem[s.Offset:], s.Data)
	}
	if !bytes.Equal(mem, orig) {
		t.Error("the memory of the rewritten module with its segments written differs from the original's")
	}
	if len(exports) != len(origExports) {
		t.Errorf("%d exported functions, want %d", len(exports), len(origExports))
	}
	if !slices.Equal(globals, append(origGlobals, YieldEvery, 0, 0, 0)) {
		t.Errorf("globals %v, want %v, the yield budget, %d, and the timer marks' three, zero", globals, origGlobals, YieldEvery)
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
	case reason != "" && (!errors.Is(err, ErrUnsupported) || !strings.HasSuffix(err.Error(), reason)):
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

func TestRewrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wasm []byte
		// unsupported is the reason given, or empty when the rewrite works.
		unsupported string
		segments    []Segment
		globals     []string
	}{
		{"active data and a mutable global",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.ActiveData),
			"", []Segment{{16, []byte("abc")}}, []string{"durabox:global:0"}},
		{"no data",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
			"", nil, nil},
		{"an imported global shifts the indices",
			wasmtest.Module(1, wasmtest.TypeSec, 2, "\x02"+wasmtest.YieldImport+"\x01m\x01g\x03\x7f\x00", 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
			"", nil, []string{"durabox:global:1"}},
		{"no export section to add to",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 10, wasmtest.CodeSec),
			"", nil, []string{"durabox:global:0"}},
		{"passive data",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.PassiveData),
			"data segment 0 is passive", nil, nil},
		{"data outside the initial memory",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, "\x01\x00\x41\xff\xff\x03\x0b\x03abc"),
			"data segment 0 (at 65535, 3 bytes) lies outside the initial memory", nil, nil},
		{"no memory",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
			"the module defines no memory", nil, nil},
		{"imported memory",
			wasmtest.Module(1, wasmtest.TypeSec, 2, "\x02"+wasmtest.YieldImport+"\x01m\x01m\x02\x00\x01", 3, wasmtest.FuncSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
			"the module imports its memory", nil, nil},
		{"start function",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 8, "\x00", 10, wasmtest.CodeSec),
			"the module has a start function", nil, nil},
		{"truncated", wasmtest.Module(1, wasmtest.TypeSec)[:12], "truncated", nil, nil},
		{"export name taken",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 7, "\x01\x10durabox:global:0\x00\x00", 10, wasmtest.CodeSec),
			`the module already exports "durabox:global:0"`, nil, nil},
		{"no sched_yield to call",
			wasmtest.Module(1, wasmtest.TypeSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, "\x01\x0b_initialize\x00\x00", 10, wasmtest.CodeSec),
			"the module does not import wasi_snapshot_preview1.sched_yield as a function of no parameters and an i32 result", nil, nil},
		{"a sched_yield of another type",
			wasmtest.Module(1, wasmtest.TypeSec, 2, "\x01\x16wasi_snapshot_preview1\x0bsched_yield\x00\x00", 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
			"the module does not import wasi_snapshot_preview1.sched_yield as a function of no parameters and an i32 result", nil, nil},
		{"memory.init, which needs the segments taken out",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 12, "\x01",
				10, "\x01\x0c\x00\x41\x00\x41\x00\x41\x00\xfc\x08\x00\x00\x0b", 11, wasmtest.ActiveData),
			"function body 0: no snapshot: memory.init or data.drop at byte 7 needs the data segments the rewrite takes out", nil, nil},
		{"a function section and no code section: $charge gets one",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, "\x00", 5, wasmtest.MemorySec, 11, wasmtest.ActiveData),
			"", []Segment{{16, []byte("abc")}}, nil},
		{"a table of 64-bit indices",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 4, "\x01\x70\x04\x01", 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
			"limits of kind 0x04", nil, nil},
		{"an instruction it does not know",
			wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, "\x01\x03\x00\x14\x0b"),
			"function body 0: no snapshot: opcode 0x14 at byte 1", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Rewrite(tt.wasm)
			if refused(t, err, tt.unsupported) {
				return
			}
			if len(l.Segments) != len(tt.segments) {
				t.Fatalf("segments %v, want %v", l.Segments, tt.segments)
			}
			for i := range l.Segments {
				if l.Segments[i].Offset != tt.segments[i].Offset || !bytes.Equal(l.Segments[i].Data, tt.segments[i].Data) {
					t.Errorf("segment %d: %v, want %v", i, l.Segments[i], tt.segments[i])
				}
			}
			if strings.Join(l.Globals, " ") != strings.Join(tt.globals, " ") {
				t.Errorf("globals %q, want %q", l.Globals, tt.globals)
			}
			if _, err := wazero.NewRuntime(ctx).CompileModule(ctx, l.Wasm); err != nil {
				t.Fatalf("the rewritten module does not compile: %v", err)
			}
			if got, want := exportedGlobals(t, l.Wasm), append(slices.Clone(tt.globals), BudgetExport, TimerCallExport, TimerExport, TimerLiveExport); !slices.Equal(got, want) {
				t.Errorf("exported globals %q, want %q", got, want)
			}
		})
	}
}
