package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/durabox/durabox/host/internal/wasi"
)

// WazeroOptions configures the wazero runtime. The zero value means
// defaults.
type WazeroOptions struct {
	// CacheDir keeps compiled modules on disk, so a restarted host does not
	// compile them again. Empty means no disk cache.
	CacheDir string
	// MemoryLimitBytes caps every instance's linear memory. Zero means
	// wasm32's 4 GiB.
	MemoryLimitBytes uint64
}

const pageSize = 64 << 10

type wazeroRuntime struct {
	r     wazero.Runtime
	cache wazero.CompilationCache
}

type envKey struct{}

// NewWazero returns a Runtime on wazero whose only import modules are the
// host's own (package wasi): WASI and the host's capabilities.
func NewWazero(ctx context.Context, opts WazeroOptions) (Runtime, error) {
	cfg := wazero.NewRuntimeConfig().WithCloseOnContextDone(true)
	if opts.MemoryLimitBytes > 0 {
		cfg = cfg.WithMemoryLimitPages(uint32(min(opts.MemoryLimitBytes/pageSize, 65536)))
	}
	rt := &wazeroRuntime{}
	if opts.CacheDir != "" {
		if err := os.MkdirAll(opts.CacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: compile cache: %w", err)
		}
		cache, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: compile cache %s: %w", opts.CacheDir, err)
		}
		rt.cache = cache
		cfg = cfg.WithCompilationCache(cache)
	}
	rt.r = wazero.NewRuntimeWithConfig(ctx, cfg)
	for module, fns := range wasi.Modules {
		if err := register(ctx, rt.r, module, fns); err != nil {
			rt.r.Close(ctx)
			return nil, fmt.Errorf("sandbox: register %s: %w", module, err)
		}
	}
	return rt, nil
}

// register instantiates a host module whose functions find the calling
// instance's environment in the call's context.
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
	cm, err := rt.r.CompileModule(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("sandbox: not a valid wasm module: %w", err)
	}
	return &wazeroModule{r: rt.r, cm: cm}, nil
}

func (rt *wazeroRuntime) Close(ctx context.Context) error {
	err := rt.r.Close(ctx)
	if rt.cache != nil {
		err = errors.Join(err, rt.cache.Close(ctx))
	}
	return err
}

type wazeroModule struct {
	r  wazero.Runtime
	cm wazero.CompiledModule
}

func (m *wazeroModule) Imports() []Import {
	var out []Import
	for _, f := range m.cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		out = append(out, Import{Module: mod, Name: name})
	}
	return out
}

func (m *wazeroModule) Exports() []string {
	var out []string
	for name := range m.cm.ExportedFunctions() {
		out = append(out, name)
	}
	return out
}

func (m *wazeroModule) Instantiate(ctx context.Context, cfg Config) (Instance, error) {
	ctx = experimental.WithMemoryAllocator(context.WithValue(ctx, envKey{}, cfg.Env), mmapAllocator)
	mod, err := m.r.InstantiateModule(ctx, m.cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return nil, fmt.Errorf("sandbox: instantiate: %w", err)
	}
	inst := &wazeroInstance{mod: mod, env: cfg.Env, fns: map[string]api.Function{}}
	if _, err := inst.Call(ctx, "_initialize"); err != nil {
		inst.Close(ctx)
		return nil, err
	}
	return inst, nil
}

func (m *wazeroModule) Close(ctx context.Context) error { return m.cm.Close(ctx) }

type wazeroInstance struct {
	mod api.Module
	env *wasi.Env
	fns map[string]api.Function
}

func (i *wazeroInstance) Call(ctx context.Context, export string, args ...uint64) ([]uint64, error) {
	fn, ok := i.fns[export]
	if !ok {
		fn = i.mod.ExportedFunction(export)
		if fn == nil {
			return nil, fmt.Errorf("sandbox: the module has no export %q", export)
		}
		i.fns[export] = fn
	}
	res, err := fn.Call(context.WithValue(ctx, envKey{}, i.env), args...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sandbox: %s: %w", export, ctx.Err())
		}
		return nil, fmt.Errorf("sandbox: %s: %w", export, err)
	}
	return res, nil
}

func (i *wazeroInstance) Read(addr, length uint32) ([]byte, bool) {
	b, ok := i.mod.Memory().Read(addr, length)
	if !ok {
		return nil, false
	}
	return append([]byte(nil), b...), true
}

func (i *wazeroInstance) Write(addr uint32, b []byte) bool { return i.mod.Memory().Write(addr, b) }

func (i *wazeroInstance) MemorySize() uint64 { return uint64(i.mod.Memory().Size()) }

func (i *wazeroInstance) Close(ctx context.Context) error { return i.mod.Close(ctx) }

// memory adapts wazero's memory to wasi.Memory.
type memory struct{ m api.Memory }

func (m memory) Read(addr, n uint32) ([]byte, bool) { return m.m.Read(addr, n) }
func (m memory) Write(addr uint32, b []byte) bool   { return m.m.Write(addr, b) }
