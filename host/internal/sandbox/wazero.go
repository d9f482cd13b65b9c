package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/host/internal/wasmlimits"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
)

type wazeroRuntime struct {
	// fast compiles the rewritten modules, which yield now and then, and
	// stop there when a call's context ends (yield.go); guarded compiles
	// the modules the rewrite does not handle, and has wazero stop them, at
	// a cost.
	fast, guarded wazero.Runtime
	cache         wazero.CompilationCache
}

// envKey is the context key under which a call carries its instance's Env
// to the host functions.
type envKey struct{}

// NewWazero returns a Runtime on wazero whose only import modules are the
// host's own (package wasi): WASI and the host's capabilities. A call whose
// context ends is stopped, even in an endless loop.
func NewWazero(ctx context.Context, opts Options) (Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(uint32(opts.MemoryLimitBytes / pageSize))
	rt := &wazeroRuntime{}
	if opts.CacheDir != "" {
		if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: compilation cache: %w", err)
		}
		cache, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: compilation cache %s: %w", opts.CacheDir, err)
		}
		rt.cache = cache
		cfg = cfg.WithCompilationCache(cache)
	}
	rt.fast = wazero.NewRuntimeWithConfig(ctx, cfg)
	rt.guarded = wazero.NewRuntimeWithConfig(ctx, cfg.WithCloseOnContextDone(true))
	for module, fns := range wasi.Modules {
		for _, r := range []wazero.Runtime{rt.fast, rt.guarded} {
			if err := register(ctx, r, module, fns); err != nil {
				rt.Close(ctx)
				return nil, fmt.Errorf("sandbox: register %s: %w", module, err)
			}
		}
	}
	return rt, nil
}

// register instantiates a host module whose functions find the calling
// instance's Env in the call's context.
func register(ctx context.Context, r wazero.Runtime, module string, fns []wasi.Function) error {
	b := r.NewHostModuleBuilder(module)
	for i := range fns {
		f := &fns[i]
		ps := make([]api.ValueType, len(f.Params))
		for j, p := range f.Params {
			ps[j] = api.ValueTypeI32
			if p == wasi.I64 {
				ps[j] = api.ValueTypeI64
			}
		}
		var rs []api.ValueType
		if !f.NoResult {
			rs = []api.ValueType{api.ValueTypeI32}
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			env, _ := ctx.Value(envKey{}).(*wasi.Env)
			if env == nil {
				panic("sandbox: a host call outside any instance's call")
			}
			result := f.Call(ctx, env, memory{mod.Memory()}, stack[:len(ps)])
			if !f.NoResult {
				stack[0] = uint64(result)
			}
		}), ps, rs).Export(f.Name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func (rt *wazeroRuntime) Compile(ctx context.Context, wasm []byte) (Module, error) {
	// The rewritten module is the one compiled, once; a module the rewrite
	// refuses, or whose rewritten form does not validate (which
	// wasmrewrite's fuzz target has not seen happen), is compiled as is and
	// starts the normal way.
	if l, err := wasmrewrite.Rewrite(wasm); err == nil {
		if m, err := rt.compile(ctx, l.Wasm, l); err == nil {
			l.Wasm = nil
			return m, nil
		}
	}
	m, err := rt.compile(ctx, wasm, nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox: not a valid wasm module: %w", err)
	}
	return m, nil
}

// compile compiles wasm, the rewrite l made when l is set (on the fast
// runtime), or a module as given (on the guarded one).
func (rt *wazeroRuntime) compile(ctx context.Context, wasm []byte, l *wasmrewrite.Layout) (*wazeroModule, error) {
	// wazero's decoder allocates what a module declares before it reads
	// it: a few bytes could ask for more memory than the machine has.
	if err := wasmlimits.Check(wasm); err != nil {
		return nil, err
	}
	r := rt.guarded
	if l != nil {
		r = rt.fast
	}
	cm, err := r.CompileModule(ctx, wasm)
	if pathErr := (*fs.PathError)(nil); err != nil && rt.cache != nil && errors.As(err, &pathErr) {
		// The compilation cache could not keep what was compiled (its disk
		// is full, or fails): wazero keeps the compiled module in memory
		// before it writes it to the cache, and fails the compile with the
		// write's error. Asked again, it takes the module from memory. A
		// full cache costs the next start a compile, nothing more, as on
		// wasmtime; it is no reason to refuse a module.
		cm, err = r.CompileModule(ctx, wasm)
	}
	if err != nil {
		return nil, err
	}
	var exports []string
	for name := range cm.ExportedFunctions() {
		exports = append(exports, name)
	}
	slices.Sort(exports)
	return &wazeroModule{r: r, cm: cm, exports: exports, layout: l}, nil
}

func (rt *wazeroRuntime) Close(ctx context.Context) error {
	err := errors.Join(rt.fast.Close(ctx), rt.guarded.Close(ctx))
	if rt.cache != nil {
		err = errors.Join(err, rt.cache.Close(ctx))
	}
	return err
}

type wazeroModule struct {
	// r is the runtime that compiled cm.
	r       wazero.Runtime
	cm      wazero.CompiledModule
	exports []string
	// layout is the rewrite cm was compiled from; nil when cm is the module
	// as given, which has no snapshot and does not yield.
	layout *wasmrewrite.Layout

	// snaps holds the snapshot, made by the first instantiation that asks
	// for it; idle are instances reset to it (recycle.go).
	snaps snapshots
	idle  idlePool[*wazeroInstance]
}

func (m *wazeroModule) Imports() []Import {
	var out []Import
	for _, f := range m.cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		out = append(out, Import{Module: mod, Name: name})
	}
	return out
}

func (m *wazeroModule) Exports() []string { return slices.Clone(m.exports) }

// initialize is the export of a WASI reactor that must run before any other.
const initialize = "_initialize"

func (m *wazeroModule) Instantiate(ctx context.Context, cfg Config) (Instance, error) {
	if err := cfg.check(m.exports); err != nil {
		return nil, err
	}
	return instantiate(ctx, m, cfg.Env, cfg.FromSnapshot && m.layout != nil)
}

// snapshot returns the module's snapshot, made on the first call
// (snapshots.get).
func (m *wazeroModule) snapshot(ctx context.Context) (*snapshot, error) {
	return m.snaps.get(ctx, m.takeSnapshot)
}

// start creates an instance the normal way: its memory starts as the data
// segments say, and _initialize runs under env.Starting(), after which env
// answers.
func (m *wazeroModule) start(ctx context.Context, env *wasi.Env) (*wazeroInstance, error) {
	mod, err := m.r.InstantiateModule(experimental.WithMemoryAllocator(ctx, mmapAllocator), m.cm, moduleConfig())
	if err != nil {
		return nil, fmt.Errorf("sandbox: instantiate: %w", err)
	}
	inst := m.instance(mod, env.Starting())
	if m.layout != nil {
		// The rewrite took the segments out of the module; it checked
		// that they fit in the initial memory.
		mem := mod.Memory()
		for _, s := range m.layout.Segments {
			mem.Write(s.Offset, s.Data)
		}
	}
	if _, err := inst.Call(ctx, initialize); err != nil {
		inst.Close(ctx)
		return nil, err
	}
	inst.env = env
	return inst, nil
}

func (m *wazeroModule) Close(ctx context.Context) error {
	_, err := m.snaps.close(func() error {
		err := m.cm.Close(ctx)
		for _, inst := range m.idle.close() {
			err = errors.Join(err, inst.mod.Close(ctx))
		}
		return err
	})
	return err
}

// instance wraps a new instance of m.
func (m *wazeroModule) instance(mod api.Module, env *wasi.Env) *wazeroInstance {
	inst := &wazeroInstance{mod: mod, module: m, env: env, fns: map[string]api.Function{}}
	if m.layout != nil {
		inst.budget, _ = mod.ExportedGlobal(wasmrewrite.BudgetExport).(api.MutableGlobal)
		for _, name := range timerExports {
			g, _ := mod.ExportedGlobal(name).(api.MutableGlobal)
			inst.timers = append(inst.timers, g)
		}
	}
	return inst
}

type wazeroInstance struct {
	mod    api.Module
	module *wazeroModule
	env    *wasi.Env
	fns    map[string]api.Function
	// budget is the rewritten module's yield budget, set at every call
	// (wasmrewrite.BudgetExport); timers are the globals of its timer
	// marks (timerExports), zeroed at every call. Both are nil for a
	// module as given.
	budget api.MutableGlobal
	timers []api.MutableGlobal
	// snapshot is the snapshot whose memory the instance maps, if it does.
	snapshot *snapshot
	// stopped is set by the first call that failed.
	stopped bool
	// closed is set by Close. A wasm instance reset for reuse gets a new
	// wazeroInstance, so a stale reference to this one cannot reach it.
	closed bool
}

func (i *wazeroInstance) Call(ctx context.Context, export string, args ...uint64) ([]uint64, error) {
	if err := unusable(i.closed, i.stopped); err != nil {
		return nil, err
	}
	fn, ok := i.fns[export]
	if !ok {
		fn = i.mod.ExportedFunction(export)
		if fn == nil {
			return nil, fmt.Errorf("sandbox: the module has no export %q", export)
		}
		i.fns[export] = fn
	}
	if i.budget != nil {
		i.budget.Set(wasmrewrite.YieldEvery)
		for _, g := range i.timers {
			g.Set(0)
		}
	}
	res, err := fn.Call(context.WithValue(ctx, envKey{}, i.env), args...)
	timer := ""
	if i.timers != nil {
		timer = timerLeft(i.env, export, uint32(i.timers[2].Get()), uint32(i.timers[1].Get()))
	}
	if err := callError(ctx, export, err, i.env.TakeSleep(), timer); err != nil {
		i.stopped = true
		return nil, err
	}
	return res, nil
}

func (i *wazeroInstance) Read(addr, length uint32) ([]byte, bool) {
	b, ok := i.mod.Memory().Read(addr, length)
	if !ok {
		return nil, false
	}
	return slices.Clone(b), true
}

func (i *wazeroInstance) Write(addr uint32, b []byte) bool { return i.mod.Memory().Write(addr, b) }

func (i *wazeroInstance) MemorySize() uint64 { return uint64(i.mod.Memory().Size()) }

func (i *wazeroInstance) Resident() uint64 {
	mem := i.mod.Memory()
	b, _ := mem.Read(0, mem.Size())
	return ownBytes(b) + wazeroOverhead
}

// wazeroOverhead is what a wazero instance of a Go guest costs beside its
// linear memory: its function references and tables on Go's heap, about
// 185 KiB (the memory step of make bench, BENCHMARKS.md).
const wazeroOverhead = 192 << 10

// ownBytes is what of mem, a linear memory, the process has written
// (writtenPages), in bytes; all of it where the system does not tell.
func ownBytes(mem []byte) uint64 {
	written, err := writtenPages(mem)
	if written == nil || err != nil {
		return uint64(len(mem))
	}
	var n int
	for _, w := range written {
		n += bits.OnesCount64(w)
	}
	return uint64(n) * osPageSize
}

// Close closes the instance. One that started from a snapshot and never
// failed tells the snapshot which pages it wrote, while the snapshot learns
// them, and is reset and kept for reuse when it can be (recycle.go).
func (i *wazeroInstance) Close(ctx context.Context) error {
	if i.closed {
		return nil
	}
	i.closed = true
	if s := i.snapshot; s != nil && !i.stopped {
		mem := i.mod.Memory()
		b, _ := mem.Read(0, mem.Size())
		i.env = nil // the next user's comes with takeIdle
		if recycle(&i.module.idle, i, s, i.module.layout, b, func(values []uint64) error {
			return setGlobals(i.mod, i.module.layout.Globals, values)
		}) {
			return nil
		}
	}
	return i.mod.Close(ctx)
}

// memory adapts wazero's memory to wasi.Memory.
type memory struct{ m api.Memory }

func (m memory) Read(addr, n uint32) ([]byte, bool) { return m.m.Read(addr, n) }
func (m memory) Write(addr uint32, b []byte) bool   { return m.m.Write(addr, b) }

// takeIdle returns a reset instance of m, now answering to env, if there
// is one.
func (m *wazeroModule) takeIdle(env *wasi.Env) (*wazeroInstance, bool) { return m.idle.take(env) }

func (i *wazeroInstance) reopen(env *wasi.Env) *wazeroInstance {
	reset := *i
	reset.env, reset.closed = env, false
	return &reset
}

// setGlobals sets the mutable globals named names of mod to values.
func setGlobals(mod api.Module, names []string, values []uint64) error {
	for i, name := range names {
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("no mutable global %q", name)
		}
		g.Set(values[i])
	}
	return nil
}
