//go:build !nowasmtime

package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
)

// wasmtimeModulePath is the Go module of the wasmtime binding; its version
// (and so wasmtime's) keys the compilation cache.
const wasmtimeModulePath = "github.com/bytecodealliance/wasmtime-go/v39"

type wasmtimeRuntime struct {
	engine *wasmtime.Engine
	linker *wasmtime.Linker
	opts   Options
	// version keys the compilation cache: the binding's module version and
	// the machine.
	version string
}

// NewWasmtime returns a Runtime on wasmtime (Cranelift, through cgo) whose
// only import modules are the host's own (package wasi), as NewWazero's.
// Instances start from the module's snapshot and are reset for reuse as on
// wazero: wasmtime-go has no hook for an instance's memory, so the
// snapshot's image is mapped over the memory wasmtime made, once it has
// grown to the snapshot's size. A module the rewriter refuses is refused:
// an endless loop in it could not be stopped.
func NewWasmtime(ctx context.Context, opts Options) (Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.CacheDir != "" {
		if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: compilation cache: %w", err)
		}
	}
	cfg := wasmtime.NewConfig()
	// What wazero does not run is refused here too: relaxed SIMD (whose
	// results the hardware chooses) and threads. NaN bit patterns are left
	// to the processor, as wazero leaves them: canonicalizing them here
	// alone would make the runtimes differ.
	cfg.SetWasmRelaxedSIMD(false)
	// A Go guest's calls nest on the wasm stack as deep as on its own
	// stack (which the SDK caps at 4 MiB); past wasmtime's default of 512
	// KiB the guest would trap before the Go runtime could say "stack
	// overflow", as it does on wazero. The thread the call runs on has 8
	// MiB.
	cfg.SetMaxWasmStack(wasmStack)
	cfg.SetWasmThreads(false)
	engine := wasmtime.NewEngineWithConfig(cfg)
	linker := wasmtime.NewLinker(engine)
	for module, fns := range wasi.Modules {
		for i := range fns {
			if err := define(linker, module, &fns[i]); err != nil {
				return nil, fmt.Errorf("sandbox: register %s: %w", module, err)
			}
		}
	}
	return &wasmtimeRuntime{engine: engine, linker: linker, opts: opts, version: wasmtimeVersion()}, nil
}

// wasmtimeVersion names the wasmtime this binary was built with.
func wasmtimeVersion() string {
	v := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == wasmtimeModulePath {
				v = d.Version
			}
		}
	}
	return fmt.Sprintf("wasmtime-go %s %s/%s", v, runtime.GOOS, runtime.GOARCH)
}

// define defines f in the linker: a host function that finds the calling
// instance in its store's data.
func define(l *wasmtime.Linker, module string, f *wasi.Function) error {
	ps := make([]*wasmtime.ValType, len(f.Params))
	for j, p := range f.Params {
		ps[j] = wasmtime.NewValType(wasmtime.KindI32)
		if p == wasi.I64 {
			ps[j] = wasmtime.NewValType(wasmtime.KindI64)
		}
	}
	var rs []*wasmtime.ValType
	if !f.NoResult {
		rs = []*wasmtime.ValType{wasmtime.NewValType(wasmtime.KindI32)}
	}
	return l.FuncNew(module, f.Name, wasmtime.NewFuncType(ps, rs), func(c *wasmtime.Caller, args []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
		i := c.Data().(*wasmtimeCall)
		a := make([]uint64, len(args))
		for j, v := range args {
			if v.Kind() == wasmtime.KindI64 {
				a[j] = uint64(v.I64())
			} else {
				a[j] = uint64(uint32(v.I32()))
			}
		}
		mem := callerMemory{c: c}
		result := f.Call(i.ctx, i.env, &mem, a)
		if f.NoResult {
			return nil, nil
		}
		return []wasmtime.Val{wasmtime.ValI32(int32(result))}, nil
	})
}

func (rt *wasmtimeRuntime) Compile(ctx context.Context, wasm []byte) (Module, error) {
	l, err := wasmrewrite.Rewrite(wasm)
	if err != nil {
		if verr := wasmtime.ModuleValidate(rt.engine, wasm); verr != nil {
			return nil, fmt.Errorf("sandbox: not a valid wasm module: %w", verr)
		}
		return nil, fmt.Errorf("sandbox: wasmtime runs only modules whose loops the sandbox can count (every Go module), and this one it cannot: %w; run it with --runtime wazero", err)
	}
	mod, err := rt.compile(l.Wasm)
	if err != nil {
		return nil, fmt.Errorf("sandbox: not a valid wasm module: %w", err)
	}
	l.Wasm = nil
	m := &wasmtimeModule{rt: rt, mod: mod, layout: l}
	for _, im := range mod.Imports() {
		if im.Type().FuncType() == nil {
			continue
		}
		name := ""
		if n := im.Name(); n != nil {
			name = *n
		}
		m.imports = append(m.imports, Import{Module: im.Module(), Name: name})
	}
	for _, ex := range mod.Exports() {
		if ex.Type().FuncType() != nil {
			m.exports = append(m.exports, ex.Name())
		}
	}
	slices.Sort(m.exports)
	return m, nil
}

// compile compiles wasm, or takes it from the cache, keyed by the module's
// hash and the runtime's version, where it also keeps what it compiled.
func (rt *wasmtimeRuntime) compile(wasm []byte) (*wasmtime.Module, error) {
	if rt.opts.CacheDir == "" {
		return wasmtime.NewModule(rt.engine, wasm)
	}
	key := sha256.Sum256(slices.Concat([]byte(rt.version+"\x00"), wasm))
	path := filepath.Join(rt.opts.CacheDir, "wasmtime-"+hex.EncodeToString(key[:])+".cwasm")
	if b, err := os.ReadFile(path); err == nil {
		if mod, err := wasmtime.NewModuleDeserialize(rt.engine, b); err == nil {
			return mod, nil
		}
	}
	mod, err := wasmtime.NewModule(rt.engine, wasm)
	if err != nil {
		return nil, err
	}
	if b, err := mod.Serialize(); err == nil {
		// A failed write costs the next start a compile, nothing more.
		if f, err := os.CreateTemp(rt.opts.CacheDir, "wasmtime-*.tmp"); err == nil {
			_, werr := f.Write(b)
			if cerr := f.Close(); werr == nil && cerr == nil {
				os.Rename(f.Name(), path)
			}
			os.Remove(f.Name())
		}
	}
	return mod, nil
}

func (rt *wasmtimeRuntime) Close(ctx context.Context) error {
	rt.linker.Close()
	rt.engine.Close()
	return nil
}

type wasmtimeModule struct {
	rt      *wasmtimeRuntime
	mod     *wasmtime.Module
	layout  *wasmrewrite.Layout
	imports []Import
	exports []string
	// snaps holds the snapshot, made by the first instantiation that asks
	// for it; idle are instances reset to it (recycle.go).
	snaps snapshots
	idle  idlePool[*wasmtimeInstance]
}

func (m *wasmtimeModule) Imports() []Import { return slices.Clone(m.imports) }
func (m *wasmtimeModule) Exports() []string { return slices.Clone(m.exports) }

// Close closes the snapshot and the instances reset for reuse; live
// instances outlive it.
func (m *wasmtimeModule) Close(context.Context) error {
	_, err := m.snaps.close(func() error {
		for _, inst := range m.idle.close() {
			inst.store.Close()
		}
		return nil
	})
	return err
}

func (m *wasmtimeModule) Instantiate(ctx context.Context, cfg Config) (Instance, error) {
	if err := cfg.check(m.exports); err != nil {
		return nil, err
	}
	if m.snaps.isClosed() {
		return nil, errModuleClosed
	}
	return instantiate(ctx, m, cfg.Env, cfg.FromSnapshot)
}

// snapshot returns the module's snapshot, made on the first call
// (snapshots.get).
func (m *wasmtimeModule) snapshot(ctx context.Context) (*snapshot, error) {
	return m.snaps.get(ctx, m.takeSnapshot)
}

// instance creates an instance in a store of its own, answering to env,
// whose memory is as wasmtime made it: without the data segments, which the
// rewrite took out.
func (m *wasmtimeModule) instance(env *wasi.Env) (*wasmtimeInstance, error) {
	inst := &wasmtimeInstance{module: m, env: env, call: &wasmtimeCall{}}
	inst.store = wasmtime.NewStoreWithData(m.rt.engine, inst.call)
	inst.store.Limiter(int64(m.rt.opts.MemoryLimitBytes/pageSize*pageSize), -1, -1, -1, -1)
	wi, err := m.rt.linker.Instantiate(inst.store, m.mod)
	if err != nil {
		inst.store.Close()
		return nil, fmt.Errorf("sandbox: instantiate: %w", err)
	}
	inst.inst = wi
	if ex := wi.GetExport(inst.store, "memory"); ex != nil {
		inst.mem = ex.Memory()
	}
	if inst.mem == nil {
		inst.store.Close()
		return nil, errors.New("sandbox: instantiate: the module exports no memory")
	}
	inst.budget = wi.GetExport(inst.store, wasmrewrite.BudgetExport).Global()
	for _, name := range timerExports {
		inst.timers = append(inst.timers, wi.GetExport(inst.store, name).Global())
	}
	for _, name := range m.layout.Globals {
		inst.globals = append(inst.globals, wi.GetExport(inst.store, name).Global())
	}
	return inst, nil
}

// start creates an instance the normal way: its memory gets the data
// segments, and _initialize runs under env.Starting(), after which env
// answers.
func (m *wasmtimeModule) start(ctx context.Context, env *wasi.Env) (*wasmtimeInstance, error) {
	inst, err := m.instance(env.Starting())
	if err != nil {
		return nil, err
	}
	for _, s := range m.layout.Segments {
		inst.Write(s.Offset, s.Data)
	}
	if _, err := inst.Call(ctx, initialize); err != nil {
		inst.Close(ctx)
		return nil, err
	}
	inst.env = env
	return inst, nil
}

// takeSnapshot starts an instance the normal way under snapshotEnv and
// copies out its state: the same, byte for byte, as wazero's snapshot of
// the module.
func (m *wasmtimeModule) takeSnapshot(ctx context.Context) (*snapshot, error) {
	return snapshotOf(ctx, m, func(inst *wasmtimeInstance) (*snapshot, error) {
		globals := make([]uint64, len(inst.globals))
		for j, g := range inst.globals {
			globals[j] = valueBits(g.Get(inst.store).Get())
		}
		return newSnapshot(inst.mem.UnsafeData(inst.store), globals)
	})
}

// fromSnapshot creates an instance whose memory and globals are the
// snapshot's: its memory grows to the snapshot's size, and the snapshot's
// image is mapped over it copy-on-write (or copied in, where it cannot
// be), as on wazero.
func (m *wasmtimeModule) fromSnapshot(ctx context.Context, s *snapshot, env *wasi.Env) (*wasmtimeInstance, error) {
	inst, err := m.instance(env)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*wasmtimeInstance, error) {
		inst.Close(ctx)
		return nil, fmt.Errorf("sandbox: instantiate from a snapshot: %w", err)
	}
	if _, err := inst.mem.Grow(inst.store, uint64(s.pages)-inst.mem.Size(inst.store)); err != nil {
		return fail(fmt.Errorf("cannot grow the memory to %d pages: %w", s.pages, err))
	}
	mem := inst.mem.UnsafeData(inst.store)
	mapped := s.memory.mapOnto(mem)
	if !mapped {
		if err := s.memory.copyTo(mem); err != nil {
			return fail(err)
		}
	}
	if err := inst.setGlobals(s.globals); err != nil {
		return fail(err)
	}
	if mapped {
		s.hot.prefault(mem)
		inst.snapshot = s
	}
	return inst, nil
}

// takeIdle returns a reset instance of m, now answering to env, if there
// is one.
func (m *wasmtimeModule) takeIdle(env *wasi.Env) (*wasmtimeInstance, bool) { return m.idle.take(env) }

func (i *wasmtimeInstance) reopen(env *wasi.Env) *wasmtimeInstance {
	reset := *i
	reset.env, reset.closed = env, false
	return &reset
}

// wasmtimeCall is what the host functions of a call in progress answer
// from: its store's data.
type wasmtimeCall struct {
	ctx context.Context
	env *wasi.Env
}

type wasmtimeInstance struct {
	module *wasmtimeModule
	store  *wasmtime.Store
	inst   *wasmtime.Instance
	mem    *wasmtime.Memory
	// budget is the rewritten module's yield budget, set at every call
	// (wasmrewrite.BudgetExport); timers are the globals of its timer
	// marks (timerExports), zeroed at every call; globals are its mutable
	// globals, in Layout.Globals' order.
	budget  *wasmtime.Global
	timers  []*wasmtime.Global
	globals []*wasmtime.Global
	env     *wasi.Env
	// call is the store's data, set for the call in progress.
	call *wasmtimeCall
	fns  map[string]*wasmtime.Func
	// snapshot is the snapshot whose memory the instance maps, if it does.
	snapshot *snapshot
	// stopped is set by the first call that failed; closed by Close.
	stopped bool
	closed  bool
}

func (i *wasmtimeInstance) Call(ctx context.Context, export string, args ...uint64) (res []uint64, err error) {
	if err := unusable(i.closed, i.stopped); err != nil {
		return nil, err
	}
	fn, ok := i.fns[export]
	if !ok {
		if fn = i.inst.GetFunc(i.store, export); fn == nil {
			return nil, fmt.Errorf("sandbox: the module has no export %q", export)
		}
		if i.fns == nil {
			i.fns = map[string]*wasmtime.Func{}
		}
		i.fns[export] = fn
	}
	params := fn.Type(i.store).Params()
	if len(params) != len(args) {
		return nil, fmt.Errorf("sandbox: %s takes %d arguments, not %d", export, len(params), len(args))
	}
	in := make([]any, len(args))
	for j, a := range args {
		switch params[j].Kind() {
		case wasmtime.KindI32:
			in[j] = int32(uint32(a))
		case wasmtime.KindI64:
			in[j] = int64(a)
		case wasmtime.KindF32:
			in[j] = math.Float32frombits(uint32(a))
		default:
			in[j] = math.Float64frombits(a)
		}
	}
	if err := i.budget.Set(i.store, wasmtime.ValI32(wasmrewrite.YieldEvery)); err != nil {
		return nil, fmt.Errorf("sandbox: %s: set the yield budget: %w", export, err)
	}
	for _, g := range i.timers {
		if err := g.Set(i.store, wasmtime.ValI32(0)); err != nil {
			return nil, fmt.Errorf("sandbox: %s: zero the timer marks: %w", export, err)
		}
	}
	i.call.ctx, i.call.env = ctx, i.env
	out, err := i.callFunc(fn, in)
	i.call.ctx, i.call.env = nil, nil
	timer := timerLeft(i.env, export, uint32(i.timers[2].Get(i.store).I32()), uint32(i.timers[1].Get(i.store).I32()))
	if err := callError(ctx, export, err, i.env.TakeSleep(), timer); err != nil {
		i.stopped = true
		return nil, err
	}
	switch v := out.(type) {
	case nil:
		return nil, nil
	case []wasmtime.Val:
		for _, r := range v {
			res = append(res, valueBits(r.Get()))
		}
		return res, nil
	}
	return []uint64{valueBits(out)}, nil
}

// callFunc calls fn, and returns as an error what a host function panicked
// with (wasmtime-go unwinds the guest and panics again once out of it).
func (i *wasmtimeInstance) callFunc(fn *wasmtime.Func, args []any) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", p)
			}
		}
	}()
	return fn.Call(i.store, args...)
}

// valueBits returns a result's bits, as wazero gives them.
func valueBits(v any) uint64 {
	switch v := v.(type) {
	case int32:
		return uint64(uint32(v))
	case int64:
		return uint64(v)
	case float32:
		return uint64(math.Float32bits(v))
	case float64:
		return math.Float64bits(v)
	}
	return 0
}

func (i *wasmtimeInstance) Read(addr, length uint32) ([]byte, bool) {
	b, ok := memRange(i.mem.UnsafeData(i.store), addr, length)
	return slices.Clone(b), ok
}

func (i *wasmtimeInstance) Write(addr uint32, b []byte) bool {
	dst, ok := memRange(i.mem.UnsafeData(i.store), addr, uint32(len(b)))
	copy(dst, b)
	return ok
}

func (i *wasmtimeInstance) MemorySize() uint64 { return uint64(i.mem.DataSize(i.store)) }

// Resident counts the pages of its linear memory the instance wrote (the
// others are not there yet, or are pages of the snapshot, which every
// instance maps copy-on-write, and shares), and its store.
func (i *wasmtimeInstance) Resident() uint64 {
	return ownBytes(i.mem.UnsafeData(i.store)) + wasmtimeOverhead
}

// wasmtimeOverhead is what a wasmtime instance of a Go guest costs beside
// its linear memory: its store, outside Go's heap. 100 instances of the
// hello example cost the process 280 to 288 KiB each, about 104 KiB more
// than the pages they wrote, measured once the C allocator has returned
// what it held free (host: TestLiveMemoryCountsWhatInstancesHold,
// 2026-11-28; without that, a store that reused what SQLite had freed
// measured as costing less than nothing).
const wasmtimeOverhead = 104 << 10

// setGlobals sets the instance's mutable globals to values, in
// Layout.Globals' order.
func (i *wasmtimeInstance) setGlobals(values []uint64) error {
	for j, g := range i.globals {
		var v wasmtime.Val
		switch g.Type(i.store).Content().Kind() {
		case wasmtime.KindI32:
			v = wasmtime.ValI32(int32(uint32(values[j])))
		case wasmtime.KindI64:
			v = wasmtime.ValI64(int64(values[j]))
		case wasmtime.KindF32:
			v = wasmtime.ValF32(math.Float32frombits(uint32(values[j])))
		default:
			v = wasmtime.ValF64(math.Float64frombits(values[j]))
		}
		if err := g.Set(i.store, v); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the instance. One that started from a snapshot and never
// failed tells the snapshot which pages it wrote, while the snapshot learns
// them, and is reset and kept for reuse when it can be (recycle.go).
func (i *wasmtimeInstance) Close(context.Context) error {
	if i.closed {
		return nil
	}
	i.closed = true
	i.env = nil // the next user's comes with takeIdle
	if s := i.snapshot; s != nil && !i.stopped && recycle(&i.module.idle, i, s, i.module.layout, i.mem.UnsafeData(i.store), i.setGlobals) {
		return nil
	}
	i.store.Close()
	return nil
}

// memRange returns mem[addr:addr+n], or false when it is out of range.
func memRange(mem []byte, addr, n uint32) ([]byte, bool) {
	end := uint64(addr) + uint64(n)
	if end > uint64(len(mem)) {
		return nil, false
	}
	return mem[addr:end:end], true
}

// callerMemory adapts the memory of a host function's caller to
// wasi.Memory.
type callerMemory struct {
	c   *wasmtime.Caller
	mem []byte
}

func (m *callerMemory) data() []byte {
	if m.mem == nil {
		if ex := m.c.GetExport("memory"); ex != nil && ex.Memory() != nil {
			m.mem = ex.Memory().UnsafeData(m.c)
		}
	}
	return m.mem
}

func (m *callerMemory) Read(addr, n uint32) ([]byte, bool) { return memRange(m.data(), addr, n) }

func (m *callerMemory) Write(addr uint32, b []byte) bool {
	dst, ok := memRange(m.data(), addr, uint32(len(b)))
	copy(dst, b)
	return ok
}

// wasmStack is the most wasm stack a call may use, in bytes.
const wasmStack = 6 << 20
