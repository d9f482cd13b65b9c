package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/smalldisk"
)

// TestWazeroCompilesOnAFullCache: with its compilation cache on a full
// disk, wazero still compiles a module, which then runs: a cache that
// cannot keep what was compiled costs the next start a compile, and is no
// reason to refuse a module (it was: "not a valid wasm module: write …:
// no space left on device", and a host took the module for one it cannot
// run).
func TestWazeroCompilesOnAFullCache(t *testing.T) {
	t.Parallel()
	compilesOnAFullCache(t, NewWazero)
}

// compilesOnAFullCache compiles and runs the test guest on a runtime that
// newRuntime makes with its compilation cache on a full disk.
func compilesOnAFullCache(t *testing.T, newRuntime func(context.Context, Options) (Runtime, error)) {
	t.Helper()
	wasm, err := guestbuild.Wasm(guestPkg)
	if err != nil {
		t.Fatal(err)
	}
	disk := smalldisk.Mount(t, 1<<20)
	dir := filepath.Join(disk, "cache")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	smalldisk.Fill(t, disk)
	rt, err := newRuntime(ctx, Options{CacheDir: dir, MemoryLimitBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wasm)
	if err != nil {
		t.Fatalf("compile with the cache on a full disk: %v", err)
	}
	defer mod.Close(ctx)
	inst := instance(t, mod, wasi.NewDeterministic(seed(1), nil, nil))
	call(t, inst, "allocate", 8)
}
