//go:build !nowasmtime

package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// A wasmtime instance that closes healthy is reset to the snapshot and
// serves the next Instantiate: its next user cannot see a secret the last
// one left in its memory or its globals, and finds exactly the snapshot's
// state. One that failed, one whose memory grew, and those of a closed
// module are not reused.
func TestWasmtimeReusedInstanceForgetsItsLastUser(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("instances are reused only where /proc/self/pagemap tells which pages they wrote")
	}
	mod := compiledGuestOn(t, NewWasmtime, Options{MemoryLimitBytes: 256 << 20}).(*wasmtimeModule)
	start := starter[*wasmtimeInstance](t, mod)
	first := start()
	if got := call(t, first, "bump", 7); got != 7 {
		t.Fatalf("bump(7) = %d", got)
	}
	s, err := mod.snapshot(ctx)
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	want := snapshotMemory(t, s)
	if first.snapshot != s || uint64(len(want)) != first.MemorySize() {
		t.Fatalf("the instance did not start from the snapshot's %d bytes (it has %d)", len(want), first.MemorySize())
	}
	// A secret at the start of every page, and in every mutable global.
	secret := []byte("the last user's secret")
	for addr := uint32(0); uint64(addr)+uint64(len(secret)) <= first.MemorySize(); addr += 4096 {
		first.Write(addr, secret)
	}
	secrets := make([]uint64, len(first.globals))
	for j := range secrets {
		secrets[j] = 0x5ec2e7 + uint64(j)
	}
	if err := first.setGlobals(secrets); err != nil {
		t.Fatal(err)
	}
	again := reusesOnce(t, first, start, func(a, b *wasmtimeInstance) bool { return a.store == b.store }, func() int { return len(mod.idle.idle) })
	mem := memoryOf(t, again)
	if bytes.Contains(mem, secret) {
		t.Error("the reused instance's memory holds the last user's secret")
	}
	if !bytes.Equal(mem, want) {
		t.Error("the reused instance's memory is not the snapshot's")
	}
	for j, g := range again.globals {
		if got := valueBits(g.Get(again.store).Get()); got != s.globals[j] {
			t.Errorf("global %s is %#x after the reset (the last user set %#x); the snapshot has %#x", mod.layout.Globals[j], got, secrets[j], s.globals[j])
		}
	}
	if got := call(t, again, "bump", 1); got != 1 {
		t.Errorf("bump(1) = %d in the reused instance; it kept its state", got)
	}

	keepsNone(t, mod, again, func() Instance { return start() }, func() int { return len(mod.idle.idle) })
}

// wasmtime's snapshot of a module is wazero's, byte for byte and global
// for global: an instance starts from the same state on either runtime.
func TestWasmtimeSnapshotIsWazeros(t *testing.T) {
	t.Parallel()
	onWazero := compiledGuest(t, Options{MemoryLimitBytes: 64 << 20}).(*wazeroModule)
	onWasmtime := compiledGuestOn(t, NewWasmtime, Options{MemoryLimitBytes: 64 << 20}).(*wasmtimeModule)
	want, err := onWazero.snapshot(ctx)
	if err != nil || want == nil {
		t.Fatal(want, err)
	}
	got, err := onWasmtime.snapshot(ctx)
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	if !bytes.Equal(snapshotMemory(t, got), snapshotMemory(t, want)) {
		t.Errorf("the memories differ (%d and %d pages)", got.pages, want.pages)
	}
	if !slices.Equal(got.globals, want.globals) {
		t.Errorf("the globals differ: %v on wasmtime, %v on wazero", got.globals, want.globals)
	}
}
