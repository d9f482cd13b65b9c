//go:build !nowasmtime

package sandbox

import (
	"context"
	"testing"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/procmem"
)

// runtimes are the runtimes the benchmarks run on, each a sub-benchmark.
var runtimes = []struct {
	name string
	new  func(context.Context, Options) (Runtime, error)
}{{"wazero", NewWazero}, {"wasmtime", NewWasmtime}}

func helloModule(b *testing.B, newRuntime func(context.Context, Options) (Runtime, error)) Module {
	b.Helper()
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		b.Fatal(err)
	}
	rt, err := newRuntime(ctx, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Compile(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	return mod
}

// eachRuntime runs bench on each runtime's module of the hello example.
func eachRuntime(b *testing.B, bench func(*testing.B, Module)) {
	for _, rt := range runtimes {
		b.Run(rt.name, func(b *testing.B) { bench(b, helloModule(b, rt.new)) })
	}
}

// BenchmarkInstantiateHello measures a fresh instance of the hello example:
// the runtime's instantiation, the data segments, and the Go runtime's
// start-up (_initialize).
func BenchmarkInstantiateHello(b *testing.B) {
	eachRuntime(b, func(b *testing.B, mod Module) {
		benchmarkInstantiate(b, func(cfg Config) (Instance, error) { return mod.Instantiate(ctx, cfg) }, false)
	})
}

// BenchmarkInstantiateHelloSnapshot measures a new instance of the hello
// example started from its snapshot (made before the timer starts), with
// its hot pages copied in; not one reset for reuse.
func BenchmarkInstantiateHelloSnapshot(b *testing.B) {
	eachRuntime(b, func(b *testing.B, mod Module) {
		benchmarkInstantiate(b, func(cfg Config) (Instance, error) {
			switch m := mod.(type) {
			case *wazeroModule:
				s, err := m.snapshot(ctx)
				if err != nil {
					return nil, err
				}
				return m.fromSnapshot(ctx, s, cfg.Env)
			case *wasmtimeModule:
				s, err := m.snapshot(ctx)
				if err != nil {
					return nil, err
				}
				return m.fromSnapshot(ctx, s, cfg.Env)
			}
			panic("a module of neither runtime")
		}, true)
	})
}

// BenchmarkInstantiateHelloReused measures an instance of the hello
// example from its snapshot when one reset for reuse is waiting, and the
// reset when it closes.
func BenchmarkInstantiateHelloReused(b *testing.B) {
	eachRuntime(b, func(b *testing.B, mod Module) {
		benchmarkInstantiate(b, func(cfg Config) (Instance, error) { return mod.Instantiate(ctx, cfg) }, true)
	})
}

func benchmarkInstantiate(b *testing.B, instantiate func(Config) (Instance, error), fromSnapshot bool) {
	cfg := func() Config {
		return Config{Env: wasi.NewDeterministic(seed(1), nil, nil), FromSnapshot: fromSnapshot}
	}
	inst, err := instantiate(cfg())
	if err != nil {
		b.Fatal(err)
	}
	inst.Close(ctx)
	b.ResetTimer()
	for range b.N {
		inst, err := instantiate(cfg())
		if err != nil {
			b.Fatal(err)
		}
		inst.Close(ctx)
	}
}

// BenchmarkIdleRSS_100 reports the memory that 100 idle instances of the
// hello example add to the process, per instance: just started, or after
// one call of durabox_describe, which allocates. pss-KiB/instance counts a
// page of the snapshot that many instances only read once, as the system
// does; rss-KiB/instance counts it once per instance; anon-KiB/instance is
// the pages of their own the instances hold.
func BenchmarkIdleRSS_100(b *testing.B) {
	for _, tt := range []struct {
		name         string
		fromSnapshot bool
		call         string
	}{
		{"normal", false, ""},
		{"snapshot", true, ""},
		{"normal,describe", false, "durabox_describe"},
		{"snapshot,describe", true, "durabox_describe"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			mod := helloModule(b, NewWazero)
			cfg := Config{Env: wasi.NewDeterministic(seed(1), nil, nil), FromSnapshot: tt.fromSnapshot}
			warm, err := mod.Instantiate(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			warm.Close(ctx)
			var rss, pss, anon float64
			for range b.N {
				before := settled(b)
				insts := make([]Instance, 100)
				for i := range insts {
					cfg.Env = wasi.NewDeterministic(seed(1), nil, nil)
					if insts[i], err = mod.Instantiate(ctx, cfg); err != nil {
						b.Fatal(err)
					}
					if tt.call != "" {
						if _, err := insts[i].Call(ctx, tt.call); err != nil {
							b.Fatal(err)
						}
					}
				}
				after := settled(b)
				n := float64(len(insts))
				rss = float64(after.RSS-before.RSS) / 1024 / n
				pss = float64(after.PSS-before.PSS) / 1024 / n
				anon = float64(after.Anonymous-before.Anonymous) / 1024 / n
				for _, inst := range insts {
					inst.Close(ctx)
				}
			}
			b.ReportMetric(rss, "rss-KiB/instance")
			b.ReportMetric(pss, "pss-KiB/instance")
			b.ReportMetric(anon, "anon-KiB/instance")
		})
	}
}

// settled returns the process's memory once the Go runtime and the C
// allocator have returned to the system what they can.
func settled(b *testing.B) procmem.Memory {
	m, err := procmem.Settled()
	if err != nil {
		b.Skip(err)
	}
	return m
}
