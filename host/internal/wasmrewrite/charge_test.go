package wasmrewrite

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
)

// TestChargeCountsBulkMemory runs a rewritten module whose functions fill
// and copy memory: each bulk instruction charges the yield budget one
// iteration per 16 bytes before it runs, yielding once every YieldEvery,
// and still does what it did.
func TestChargeCountsBulkMemory(t *testing.T) {
	t.Parallel()
	wasm := wasmtest.Module(
		1, "\x03\x60\x00\x00\x60\x00\x01\x7f\x60\x01\x7f\x00", // () -> (), () -> i32, (i32) -> ()
		2, wasmtest.ImportSec,
		3, "\x02\x02\x02",
		5, "\x01\x00\x80\x08", // 1024 pages: 64 MiB
		7, "\x02\x04fill\x00\x01\x04copy\x00\x02",
		10, "\x02"+
			"\x0c\x00\x41\x00\x41\xab\x01\x20\x00\xfc\x0b\x00\x0b"+ // fill(n): memory.fill(0, 0xab, n)
			"\x0f\x00\x41\x80\x80\x80\x10\x41\x00\x20\x00\xfc\x0a\x00\x00\x0b", // copy(n): memory.copy(32 MiB, 0, n)
	)
	yields := 0
	mod := instantiateRewritten(t, wasm, func() { yields++ })
	budget := mod.ExportedGlobal(BudgetExport)
	steps := []struct {
		name         string
		length       uint64
		yields       int
		budget       uint64
		byte         uint32 // where the byte 0xab must then be
		budgetBefore uint64
	}{
		// Nothing to charge: the budget stays full.
		{"fill", 0, 0, YieldEvery, 0, YieldEvery},
		// 15 bytes charge nothing, 16 one iteration.
		{"fill", 15, 0, YieldEvery, 14, YieldEvery},
		{"fill", 16, 0, YieldEvery - 1, 15, YieldEvery},
		// 32 MiB charge 2^21 iterations: from an empty budget, 128
		// yields of YieldEvery each; the 16 bytes filled are copied.
		{"copy", 32 << 20, 128, 0, 32<<20 + 15, 0},
		// 64 MiB charge 2^22: from a full budget, 255 yields.
		{"fill", 64 << 20, 255, 0, 64<<20 - 1, YieldEvery},
	}
	for _, s := range steps {
		yields = 0
		budget.(api.MutableGlobal).Set(s.budgetBefore)
		if _, err := mod.ExportedFunction(s.name).Call(ctx, s.length); err != nil {
			t.Fatalf("%s(%d): %v", s.name, s.length, err)
		}
		if yields != s.yields || budget.Get() != s.budget {
			t.Errorf("%s(%d) from a budget of %d: %d yields and a budget of %d left; want %d and %d", s.name, s.length, s.budgetBefore, yields, budget.Get(), s.yields, s.budget)
		}
		if b, ok := mod.Memory().ReadByte(s.byte); s.length > 0 && (!ok || b != 0xab) {
			t.Errorf("%s(%d): the byte at %d is %#x, want 0xab", s.name, s.length, s.byte, b)
		}
	}
}

// BenchmarkCopy_64B measures a memory.copy of 64 bytes in a loop of the
// rewritten module, the loop check and the charge included: what a Go
// guest's copy of a small value costs. It reports the time per copy.
func BenchmarkCopy_64B(b *testing.B) {
	wasm := wasmtest.Module(
		1, "\x02\x60\x00\x01\x7f\x60\x01\x7f\x00", // () -> i32, (i32) -> ()
		2, "\x01\x16wasi_snapshot_preview1\x0bsched_yield\x00\x00",
		3, "\x01\x01",
		5, "\x01\x00\x01",
		7, "\x01\x03run\x00\x01",
		// run(n): n times, memory.copy(1024, 0, 64).
		10, "\x01\x22\x00\x02\x40\x03\x40\x20\x00\x45\x0d\x01\x41\x80\x08\x41\x00\x41\xc0\x00\xfc\x0a\x00\x00\x20\x00\x41\x01\x6b\x21\x00\x0c\x00\x0b\x0b\x0b",
	)
	run := instantiateRewritten(b, wasm, func() {}).ExportedFunction("run")
	const copies = 10000
	for b.Loop() {
		if _, err := run.Call(ctx, copies); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/copies, "ns/copy")
}

// instantiateRewritten rewrites wasm and instantiates it on wazero, with a
// sched_yield that calls yield and answers success; the runtime is closed
// when tb ends.
func instantiateRewritten(tb testing.TB, wasm []byte, yield func()) api.Module {
	tb.Helper()
	l, err := Rewrite(wasm)
	if err != nil {
		tb.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	tb.Cleanup(func() { rt.Close(ctx) })
	_, err = rt.NewHostModuleBuilder(YieldModule).NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) { yield(); stack[0] = 0 }), nil, []api.ValueType{api.ValueTypeI32}).
		Export(YieldName).Instantiate(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, l.Wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		tb.Fatal(err)
	}
	return mod
}
