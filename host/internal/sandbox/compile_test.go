package sandbox

import (
	"testing"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
)

// A module the rewrite refuses is compiled as is, and works as it always did, also when an
// instance asks for a snapshot.
func TestCompileFallsBack(t *testing.T) {
	t.Parallel()
	rt, err := NewWazero(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	tests := []struct {
		name string
		wasm []byte
	}{
		{"passive data", wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.PassiveData)},
		// memory.init 0 needs the segment that the rewrite takes out.
		{"memory.init", wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 12, "\x01",
			10, "\x01\x0c\x00\x41\x00\x41\x00\x41\x00\xfc\x08\x00\x00\x0b", 11, wasmtest.ActiveData)},
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
