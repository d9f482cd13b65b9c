package wasmlimits

import (
	"context"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
)

// allocBound is what a module Check passes may make wazero allocate to
// compile it: a multiple of its size (a list of n items of a byte each
// holds n values of a few words), and what compiling any module takes.
func allocBound(wasm []byte) uint64 { return 256*uint64(len(wasm)) + 32<<20 }

// FuzzCheck: whatever the bytes, Check does not panic, and a module it
// passes makes wazero (its decoder, validation and compiler) allocate no
// more than allocBound. A module Check missed that asks for gigabytes
// ends the fuzzing process, which go test reports as a crash. The seed
// corpus is testdata/fuzz/FuzzCheck and a few modules here.
func FuzzCheck(f *testing.F) {
	m := wasmtest.Module
	f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.ActiveData))
	f.Add(m(1, wasmtest.TypeSec, 3, wasmtest.FuncSec, 4, "\x01\x70\x00\x01", 9, "\x01\x00\x41\x00\x0b\x01\x00", 10, wasmtest.CodeSec, 0, "\x04name\x01\x04\x01\x00\x01f"))
	f.Add(m(10, manyLocals("\x80\x80\x03")))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if Check(wasm) != nil {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		compiled, err := rt.CompileModule(ctx, wasm)
		runtime.ReadMemStats(&after)
		if err == nil {
			compiled.Close(ctx)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > allocBound(wasm) {
			t.Fatalf("Check passed a module of %d bytes that made wazero allocate %d bytes (%v)", len(wasm), alloc, err)
		}
	})
}
