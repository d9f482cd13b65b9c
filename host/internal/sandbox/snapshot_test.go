package sandbox

import (
	"bytes"
	"errors"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
	"github.com/durabox/durabox/internal/guestbuild"
)

func fromSnapshot(t *testing.T, mod Module, env *wasi.Env) Instance {
	t.Helper()
	return instanceWith(t, mod, Config{Env: env, FromSnapshot: true})
}

// memoryOf reads an instance's whole memory.
func memoryOf(t *testing.T, inst Instance) []byte {
	t.Helper()
	b, ok := inst.Read(0, uint32(inst.MemorySize()))
	if !ok {
		t.Fatal("cannot read the memory")
	}
	return b
}

// The guest starts from its snapshot, without a fallback.
func TestGuestHasASnapshot(t *testing.T) {
	t.Parallel()
	m := guest(t).(*wazeroModule)
	if m.layout == nil {
		t.Fatal("the guest was compiled as is")
	}
	s, err := m.snapshot(ctx)
	if err != nil || s == nil {
		t.Fatalf("no snapshot: %v, %v", s, m.snaps.err)
	}
}

// Snapshots made independently (another runtime, another module) are the
// same byte for byte, so replay after a restart starts from the same state.
func TestSnapshotIsReproducible(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm(guestPkg)
	if err != nil {
		t.Fatal(err)
	}
	state := func() ([]byte, []uint64) {
		rt, err := NewWazero(ctx, Options{MemoryLimitBytes: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		mod, err := rt.Compile(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		s, err := mod.(*wazeroModule).takeSnapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.memory.Close()
		b := make([]byte, uint64(s.pages)*pageSize)
		if err := s.memory.copyTo(b); err != nil {
			t.Fatal(err)
		}
		return b, s.globals
	}
	mem1, globals1 := state()
	mem2, globals2 := state()
	if len(mem1) == 0 || !bytes.Equal(mem1, mem2) {
		t.Errorf("the memories differ (%d and %d bytes)", len(mem1), len(mem2))
	}
	if !slices.Equal(globals1, globals2) {
		t.Errorf("the globals differ: %v and %v", globals1, globals2)
	}
}

// Started from a snapshot, an orchestration's instance answers exactly as
// one started normally: both start under the one fixed Env, so what the Go
// runtime seeded itself with while it started (map order, math/rand) is the
// same whatever the instance's seed, and what it asks later comes from its
// own Env.
func TestSnapshotStartBehavesLikeNormalStart(t *testing.T) {
	t.Parallel()
	mod := guest(t)
	const logical = int64(1_800_000_000_123_456_789)
	type answers struct {
		now, random, maporder, readfile, dial, getenv, bump uint64
		stdout                                              string
	}
	run := func(s [32]byte, snap bool) answers {
		var out bytes.Buffer
		env := wasi.NewDeterministic(s, &out, nil)
		inst := instanceWith(t, mod, Config{Env: env, FromSnapshot: snap})
		env.SetTime(logical)
		a := answers{
			now: call(t, inst, "now"), random: call(t, inst, "random"), maporder: call(t, inst, "maporder"),
			readfile: call(t, inst, "readfile"), dial: call(t, inst, "dial"), getenv: call(t, inst, "getenv"),
			bump: call(t, inst, "bump", 5),
		}
		call(t, inst, "say")
		a.stdout = out.String()
		return a
	}
	normal, snap, again, other, otherNormal := run(seed(1), false), run(seed(1), true), run(seed(1), true), run(seed(2), true), run(seed(2), false)
	if snap != again || normal != snap || otherNormal != other {
		t.Fatalf("same seed, different answers: started normally %+v, from a snapshot %+v and %+v; seed 2 normally %+v, from a snapshot %+v", normal, snap, again, otherNormal, other)
	}
	if other.random == snap.random {
		t.Errorf("another seed gave the same random numbers: %d", snap.random)
	}
	// The runtime's map seed is the fixed start's, whatever the seed.
	if other.maporder != snap.maporder {
		t.Errorf("map order depends on the seed: %d and %d", snap.maporder, other.maporder)
	}
	if s := snap; int64(s.now) != logical || s.bump != 5 || s.stdout != "hello from the guest\n" {
		t.Errorf("answers %+v", snap)
	}
}

// Instances started from one snapshot share its pages until they write
// them: neither sees what another wrote.
func TestSnapshotInstancesAreIsolated(t *testing.T) {
	t.Parallel()
	mod := guest(t)
	a, b := fromSnapshot(t, mod, deterministic()), fromSnapshot(t, mod, deterministic())
	if got := call(t, a, "bump", 7); got != 7 {
		t.Fatalf("bump(7) = %d", got)
	}
	if got := call(t, b, "bump", 1); got != 1 {
		t.Errorf("another instance sees the first one's counter: bump(1) = %d", got)
	}
	c := fromSnapshot(t, mod, deterministic())
	if got := call(t, c, "bump", 1); got != 1 {
		t.Errorf("a new instance sees an old one's counter: bump(1) = %d", got)
	}
	// Every page of the snapshot, written through one instance.
	memB := memoryOf(t, b)
	n := uint32(len(memB))
	for addr := uint32(0); addr < n; addr += 4096 {
		a.Write(addr, []byte{0xa5})
	}
	d := fromSnapshot(t, mod, deterministic())
	for name, inst := range map[string]Instance{"old": b, "new": d} {
		mem := memoryOf(t, inst)
		for addr := uint32(0); addr < n; addr += 4096 {
			if mem[addr] == 0xa5 && memB[addr] != 0xa5 {
				t.Fatalf("the %s instance sees another's write at %d", name, addr)
			}
		}
	}
	if got := call(t, d, "bump", 2); got != 2 {
		t.Errorf("bump(2) = %d", got)
	}
}

func TestSnapshotMemoryLimit(t *testing.T) {
	t.Parallel()
	mod := compiledGuest(t, Options{MemoryLimitBytes: 32 << 20})
	var stderr bytes.Buffer
	inst := fromSnapshot(t, mod, wasi.NewDeterministic(seed(1), nil, &stderr))
	call(t, inst, "allocate", 8)
	var trap *TrapError
	if _, err := inst.Call(ctx, "allocate", 64); !errors.As(err, &trap) || !strings.Contains(stderr.String(), "fatal error: out of memory") {
		t.Fatalf("allocating 64 MiB under a 32 MiB limit: err = %v, stderr %q", err, stderr.String())
	}
	if size := inst.MemorySize(); size > 32<<20 {
		t.Errorf("memory grew to %d bytes", size)
	}
}

// snapshotMappings counts the process's mappings of snapshot files.
func snapshotMappings(t *testing.T) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps")
	}
	return strings.Count(string(maps), "durabox-snapshot-")
}

// Closing an instance unmaps its memory; closing the module closes the
// snapshot, and the module then refuses new instances.
//
// Not parallel: it counts the process's mappings of snapshots, which tests
// running beside it make too.
func TestSnapshotClose(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts mappings in /proc/self/maps")
	}
	mod := compiledGuest(t, Options{MemoryLimitBytes: 64 << 20})
	before := snapshotMappings(t)
	var insts []Instance
	for range 20 {
		inst, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, inst)
	}
	if n := snapshotMappings(t) - before; n != 20+1 {
		t.Errorf("%d mappings of the snapshot for 20 instances; want one each and the snapshot's own view", n)
	}
	// An instance outlives its module's Close.
	if err := mod.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := call(t, insts[0], "bump", 3); got != 3 {
		t.Errorf("bump(3) = %d after the module closed", got)
	}
	for _, inst := range insts {
		inst.Close(ctx)
	}
	if n := snapshotMappings(t) - before; n != 0 {
		t.Errorf("%d mappings of the snapshot left after closing every instance", n)
	}
	if _, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: true}); err == nil {
		t.Error("a closed module made an instance")
	}
}

// Instances of a fresh module started at once share one snapshot.
func TestSnapshotConcurrentStarts(t *testing.T) {
	t.Parallel()
	mod := compiledGuest(t, Options{MemoryLimitBytes: 64 << 20})
	var wg sync.WaitGroup
	results := make([]uint64, 8)
	for i := range results {
		wg.Go(func() {
			inst, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer inst.Close(ctx)
			res, err := inst.Call(ctx, "bump", uint64(i))
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res[0]
		})
	}
	wg.Wait()
	for i, got := range results {
		if got != uint64(i) {
			t.Errorf("instance %d: bump(%d) = %d", i, i, got)
		}
	}
}

// A module whose start fails under the snapshot's Env has no snapshot, and
// an instance that asks for one starts the normal way and fails the same
// way, every time.
func TestSnapshotOfAModuleThatDoesNotStart(t *testing.T) {
	t.Parallel()
	rt, err := NewWazero(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	trapping := wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, "\x01\x03\x00\x00\x0b", 11, wasmtest.ActiveData)
	mod, err := rt.Compile(ctx, trapping)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	if mod.(*wazeroModule).layout == nil {
		t.Fatal("compiled as is")
	}
	const want = "sandbox: _initialize trapped: wasm error: unreachable\n"
	for _, fromSnapshot := range []bool{true, true, false} {
		if _, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: fromSnapshot}); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("from a snapshot %v: err = %v, want it to start with %q", fromSnapshot, err, want)
		}
	}
	if m := mod.(*wazeroModule); m.snaps.snap != nil || !errors.Is(m.snaps.err, errStart) {
		t.Errorf("snapshot %v, error %v", m.snaps.snap, m.snaps.err)
	}
}

// A snapshot learns the pages its first instances write, and later
// instances start with those pages already their own, with the snapshot's
// contents.
func TestSnapshotLearnsHotPages(t *testing.T) {
	t.Parallel()
	mod := compiledGuest(t, Options{}).(*wazeroModule)
	for range hotSamples {
		inst, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		call(t, inst, "bump", 1)
		inst.Close(ctx)
	}
	s, err := mod.snapshot(ctx)
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	hot := 0
	for _, w := range s.hot.set {
		hot += bits.OnesCount64(w)
	}
	if s.hot.samples != hotSamples || hot == 0 {
		if s.hot.samples == 0 {
			t.Skip("this system does not tell which pages a process wrote")
		}
		t.Fatalf("learned %d hot pages from %d instances; want some, from %d", hot, s.hot.samples, hotSamples)
	}
	// A new instance, not one of those reset for reuse.
	inst, err := mod.fromSnapshot(ctx, s, deterministic())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	view := inst.mod.Memory()
	mem, _ := view.Read(0, view.Size()) // the instance's memory itself, not a copy
	size := uint64(s.pages) * pageSize
	written, err := writtenPages(mem[:size])
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range s.hot.set {
		if missing := w &^ written[i]; missing != 0 {
			t.Fatalf("hot pages %#x of word %d are not the new instance's own before it runs", missing, i)
		}
	}
	if !bytes.Equal(mem[:size], snapshotMemory(t, s)) {
		t.Fatal("the new instance's memory is not the snapshot's")
	}
	if got := call(t, inst, "bump", 1); got != 1 {
		t.Errorf("bump(1) = %d in a new instance", got)
	}
}

// snapshotMemory reads a snapshot's memory image.
func snapshotMemory(t *testing.T, s *snapshot) []byte {
	t.Helper()
	b := make([]byte, uint64(s.pages)*pageSize)
	if err := s.memory.copyTo(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// An instance that closes healthy is reset to the snapshot and serves the
// next Instantiate, exactly like a new one: same memory, same globals, and
// none of the state it had. One that failed, one whose memory grew, and
// those of a closed module are not reused.
func TestRecycledInstanceIsLikeNew(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("instances are reused only where /proc/self/pagemap tells which pages they wrote")
	}
	mod := compiledGuest(t, Options{MemoryLimitBytes: 256 << 20}).(*wazeroModule)
	s, err := mod.snapshot(ctx)
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	want := snapshotMemory(t, s)
	start := starter[*wazeroInstance](t, mod)
	first := start()
	if got := call(t, first, "bump", 7); got != 7 {
		t.Fatalf("bump(7) = %d", got)
	}
	call(t, first, "random")
	again := reusesOnce(t, first, start, func(a, b *wazeroInstance) bool { return a.mod == b.mod }, func() int { return len(mod.idle.idle) })
	if got := memoryOf(t, again); !bytes.Equal(got, want) {
		t.Error("the reset instance's memory is not the snapshot's")
	}
	for i, name := range mod.layout.Globals {
		if got := again.mod.ExportedGlobal(name).Get(); got != s.globals[i] {
			t.Errorf("global %s is %d after the reset; the snapshot has %d", name, got, s.globals[i])
		}
	}
	if got := call(t, again, "bump", 1); got != 1 {
		t.Errorf("bump(1) = %d in the reset instance; it kept its state", got)
	}

	keepsNone(t, mod, again, func() Instance { return start() }, func() int { return len(mod.idle.idle) })
}

// starter returns a function that starts an instance of mod from its
// snapshot, a T.
func starter[T Instance](t *testing.T, mod Module) func() T {
	return func() T {
		t.Helper()
		inst, err := mod.Instantiate(ctx, Config{Env: deterministic(), FromSnapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		return inst.(T)
	}
}

// reusesOnce closes first, a healthy instance, and requires the next
// instance from start to be the same one reset (same tells), kept by its
// module meanwhile (idle counts those it keeps), the old handle to refuse
// calls, and a second Close of it to change nothing. It returns the next
// instance.
func reusesOnce[T Instance](t *testing.T, first T, start func() T, same func(a, b T) bool, idle func() int) T {
	t.Helper()
	first.Close(ctx)
	if n := idle(); n != 1 {
		t.Fatalf("%d idle instances after a healthy one closed; want it kept", n)
	}
	again := start()
	if !same(again, first) {
		t.Fatal("Instantiate made a new instance instead of reusing the one reset")
	}
	if _, err := first.Call(ctx, "bump", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("a call through the closed instance's old handle: err = %v, want ErrClosed", err)
	}
	first.Close(ctx) // a second Close of the old handle must not hand the instance out twice
	if idle() != 0 {
		t.Fatal("closing the old handle again put the instance in use back among the idle ones")
	}
	return again
}

// keepsNone closes inst after a call that fails, then an instance from
// start whose memory grew, then one after its module mod closed, and
// requires that idle, how many instances mod keeps for reuse, stays zero.
func keepsNone(t *testing.T, mod Module, inst Instance, start func() Instance, idle func() int) {
	t.Helper()
	if _, err := inst.Call(ctx, "panic"); err == nil {
		t.Fatal("panic returned no error")
	}
	inst.Close(ctx)
	grown := start()
	call(t, grown, "allocate", 64)
	grown.Close(ctx)
	if n := idle(); n != 0 {
		t.Errorf("%d idle instances after a failed one and one whose memory grew closed; want none kept", n)
	}
	last := start()
	mod.Close(ctx)
	last.Close(ctx)
	if idle() != 0 {
		t.Error("an instance of a closed module was kept")
	}
}

// Resident counts the pages an instance wrote: not the snapshot's pages it
// only shares, nor memory it grew and never touched.
func TestResident(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/pagemap")
	}
	mod := compiledGuest(t, Options{MemoryLimitBytes: 64 << 20})
	inst := fromSnapshot(t, mod, deterministic())
	call(t, inst, "bump", 1)
	start := inst.Resident()
	if size := inst.MemorySize(); start == 0 || start > size/2 {
		t.Fatalf("an instance fresh from the snapshot holds %d of its %d bytes", start, size)
	}
	grown := inst.MemorySize()
	call(t, inst, "allocate", 8)
	if grown = inst.MemorySize() - grown; grown < 4<<20 {
		t.Fatalf("allocating 8 MiB grew the memory by %d bytes only", grown)
	}
	if got := inst.Resident(); got-start > grown/2 {
		t.Errorf("after growing the memory by %d bytes it never wrote, the instance holds %d bytes more", grown, got-start)
	}
	before := inst.Resident()
	const n = 1 << 20
	if !inst.Write(uint32(inst.MemorySize()-2*n), bytes.Repeat([]byte{0xa5}, n)) {
		t.Fatal("cannot write")
	}
	if got := inst.Resident() - before; got < n || got > n+2*uint64(os.Getpagesize()) {
		t.Errorf("writing 1 MiB added %d bytes", got)
	}
}
