package wasmrewrite

import (
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
)

// FuzzRewrite: whatever the input, Rewrite never panics, and it either
// refuses (with ErrUnsupported) or emits a module that compiles wherever
// the input did. The seed corpus (the modules of TestRewrite and a few
// bodies of code, bulk instructions among them) runs in go test.
func FuzzRewrite(f *testing.F) {
	m := wasmtest.Module
	f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.ActiveData))
	f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.PassiveData))
	f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 10, wasmtest.CodeSec))
	f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, "\x00", 5, wasmtest.MemorySec, 11, wasmtest.ActiveData))
	f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 12, "\x01",
		10, "\x01\x0c\x00\x41\x00\x41\x00\x41\x00\xfc\x08\x00\x00\x0b", 11, wasmtest.ActiveData))
	for _, body := range []string{
		"\x00\x03\x40\x0c\x00\x0b\x0b",                                         // an endless loop
		"\x00\x02\x40\x03\x40\x0c\x01\x0b\x0b\x0b",                             // a loop in a block
		"\x00\x41\x00\xd0\x70\x26\x00\x0b",                                     // table.set
		"\x00\xfd\x0c" + string(make([]byte, 16)) + "\x1a\x0b",                 // v128.const, drop
		"\x00\x03\x40\x41\x00\x41\x00\x41\x10\xfc\x0a\x00\x00\x0c\x00\x0b\x0b", // memory.copy in a loop
		"\x00\x41\x00\x41\x07\x41\x10\xfc\x0b\x00\x0b",                         // memory.fill
		"\x00\x41\x00\xd0\x70\x41\x01\xfc\x11\x00\x0b",                         // table.fill
		"\x00\x41\x00\x41\x00\x41\x01\xfc\x0e\x00\x00\x0b",                     // table.copy
		"\x00\xd0\x70\x41\x01\xfc\x0f\x00\x1a\x0b",                             // table.grow, drop
	} {
		code := string(appendU32(appendU32(nil, 1), uint32(len(body)))) + body
		f.Add(m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 4, "\x01\x70\x00\x01", 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, code))
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		l, err := Rewrite(wasm)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("a refusal that is not ErrUnsupported: %v", err)
			}
			return
		}
		if _, err := rt.CompileModule(ctx, wasm); err != nil {
			return // the input is not a valid module: nothing to keep
		}
		if _, err := rt.CompileModule(ctx, l.Wasm); err != nil {
			t.Fatalf("the input compiles, its rewrite does not: %v", err)
		}
	})
}
