//go:build !nowasmtime

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
	"github.com/durabox/durabox/internal/guestbuild"
)

// wasmtime keeps what it compiled in the cache directory, keyed by the
// module and its own version, and a later runtime takes it from there; a
// damaged entry is compiled again.
func TestWasmtimeCompilationCache(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm(guestPkg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	compile := func() Module {
		rt, err := NewWasmtime(ctx, Options{CacheDir: dir, MemoryLimitBytes: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		mod, err := rt.Compile(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		return mod
	}
	compile()
	entries, _ := filepath.Glob(filepath.Join(dir, "wasmtime-*.cwasm"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v, want one", entries)
	}
	for _, damage := range []bool{false, true} {
		if damage {
			os.WriteFile(entries[0], []byte("not a compiled module"), 0o600)
		}
		inst := instance(t, compile(), deterministic())
		if got := call(t, inst, "bump", 7); got != 7 {
			t.Fatalf("damaged cache %v: bump(7) = %d", damage, got)
		}
	}
}

// wasmtime refuses what it could not stop, a module the rewriter refuses,
// saying what to do; and what is not wasm at all, as such.
func TestWasmtimeRefuses(t *testing.T) {
	t.Parallel()
	rt, err := NewWasmtime(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, tt := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"a module the rewriter refuses", spinning, "sandbox: wasmtime runs only modules whose loops the sandbox can count (every Go module), and this one it cannot: no snapshot: the module has a start function; run it with --runtime wazero"},
		{"not wasm", []byte("hello"), "sandbox: not a valid wasm module: "},
		{"threads", wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, "\x01\x03\x01\x01", 7, wasmtest.ExportSec, 10, wasmtest.CodeSec), "sandbox: not a valid wasm module: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := rt.Compile(ctx, tt.wasm); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to start with %q", err, tt.want)
			}
		})
	}
}

// TestWasmtimeCompilesOnAFullCache: as TestWazeroCompilesOnAFullCache, on
// wasmtime.
func TestWasmtimeCompilesOnAFullCache(t *testing.T) {
	t.Parallel()
	compilesOnAFullCache(t, NewWasmtime)
}
