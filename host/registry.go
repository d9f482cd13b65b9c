package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/host/internal/wasmlimits"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
	"github.com/durabox/durabox/store"
)

// registry compiles modules once and keeps them, keyed by sha256, and
// remembers the modules this host cannot run (refused.go).
type registry struct {
	rt sandbox.Runtime
	// st is where deployed modules are kept (nil for a Replayer, which
	// stores none).
	st store.Modules
	// timeout bounds each call into a module that deploy makes, and
	// memoryLimit (bytes) is the runtime's, for its messages.
	timeout     time.Duration
	memoryLimit uint64
	// log is told, once, of each module this host cannot run.
	log *slog.Logger
	// guard recovers a panic while a module loads, which fails that load
	// only.
	guard guard.Guard

	mu       sync.Mutex
	compiled map[string]*module
	// loading holds the loads in progress, so that workers that need a
	// module at once (as they all do after a restart) wait for one load
	// instead of each compiling it.
	loading map[string]*load
	// loads counts the loads running, which close waits for; closing
	// says close has begun, after which no load starts.
	loads   sync.WaitGroup
	closing bool
	// refused holds why this host cannot run a module, by hash, and
	// skip their hashes, sorted: what the fetches pass over. A refusal
	// appends to a copy of skip, so a fetch can use the slice it got.
	refused map[string]error
	skip    []string
}

// load is one module being loaded from the store.
type load struct {
	done chan struct{}
	m    *module
	err  error
}

// module is a compiled module, the environment its activities see, and the
// orchestrations it registers.
type module struct {
	sandbox.Module
	env            []string
	orchestrations []string
	// updates is the manifest's: the module delivers updates.
	updates bool
	// firstPages is what the last instance of the module measured at its
	// first turn held (live.memory).
	firstPages firstPages
}

// firstPages is what a new orchestration instance of a module holds after
// its first turn, as the last one measured it: the pages of its own, at
// the linear memory's size then.
type firstPages struct{ p atomic.Pointer[measured] }

type measured struct{ size, resident uint64 }

// at returns the count at linear memory size, if the last one measured
// was at that size.
func (f *firstPages) at(size uint64) (uint64, bool) {
	if m := f.p.Load(); m != nil && m.size == size {
		return m.resident, true
	}
	return 0, false
}

func (f *firstPages) keep(size, resident uint64) { f.p.Store(&measured{size, resident}) }

func newRegistry(rt sandbox.Runtime, st store.Modules, opts Options, g guard.Guard) *registry {
	return &registry{rt: rt, st: st, timeout: opts.ActivationTimeout, memoryLimit: opts.MemoryLimit, log: g.Log, guard: g, compiled: map[string]*module{}, loading: map[string]*load{}, refused: map[string]error{}}
}

func hashOf(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return hex.EncodeToString(sum[:])
}

var wasmMagic = []byte("\x00asm")

// validate compiles wasm and checks it is a Durabox module: the ABI's
// exports, the right ABI version, only imports the host provides, among
// them sched_yield. It
// returns the compiled module and what it registers.
func (r *registry) validate(ctx context.Context, wasm []byte) (sandbox.Module, *abi.Manifest, error) {
	return validate(ctx, r.rt, wasm, r.timeout, r.memoryLimit)
}

// validate compiles wasm on rt, whose memory limit is memoryLimit bytes,
// and checks it as deploy does, each call into it under timeout.
func validate(ctx context.Context, rt sandbox.Runtime, wasm []byte, timeout time.Duration, memoryLimit uint64) (sandbox.Module, *abi.Manifest, error) {
	if !bytes.HasPrefix(wasm, wasmMagic) {
		return nil, nil, fmt.Errorf("%w: the file is not a WebAssembly module (it does not start with \\0asm); build one with durabox build, or GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared", api.ErrBadModule)
	}
	// Before the compile, which would refuse a module without sched_yield
	// in other words on wasmtime, and take it on wazero, without snapshots
	// or a step budget; after the size check, which the compile makes
	// again, so that a module that declares more than it holds is refused
	// for that.
	if yields, read := wasmrewrite.ImportsYield(wasm); read && !yields && wasmlimits.Check(wasm) == nil {
		return nil, nil, fmt.Errorf("%w: it does not import %s.%s, which the host calls to count its loops (for snapshots and --step-budget); import it as a function of no parameters and an i32 result (every Go module does; in C, call sched_yield from <sched.h>)", api.ErrBadModule, wasmrewrite.YieldModule, wasmrewrite.YieldName)
	}
	mod, err := rt.Compile(ctx, wasm)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", api.ErrBadModule, err)
	}
	manifest, err := inspect(ctx, mod, timeout, memoryLimit)
	if err != nil {
		mod.Close(ctx)
		return nil, nil, err
	}
	return mod, manifest, nil
}

// inspect checks a compiled module's imports and exports, then asks a fresh
// instance for its ABI version and manifest, each call under timeout (on a
// runtime whose memory limit is memoryLimit bytes).
func inspect(ctx context.Context, mod sandbox.Module, timeout time.Duration, memoryLimit uint64) (*abi.Manifest, error) {
	var unknown []string
	for _, imp := range mod.Imports() {
		if !wasi.Provides(imp.Module, imp.Name) {
			unknown = append(unknown, imp.Module+"."+imp.Name)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: it imports functions the host does not provide: %s", api.ErrBadModule, strings.Join(unknown, ", "))
	}
	exports := map[string]bool{}
	for _, e := range mod.Exports() {
		exports[e] = true
	}
	var missing []string
	for _, e := range abi.RequiredExports {
		if !exports[e] {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: it lacks the exports of the Durabox guest SDK (%s); in Go, import github.com/durabox/durabox/guest-sdk/durabox and build with -buildmode=c-shared; in C, compile guest-sdk/c/durabox.c with the module (guest-sdk/c/README.md)", api.ErrBadModule, strings.Join(missing, ", "))
	}
	stderr := newCrashLog()
	g, err := newGuest(ctx, mod, guestConfig{env: wasi.NewDeterministic(Seed("deploy", 0), nil, stderr), stderr: stderr, timeout: timeout, memoryLimit: memoryLimit})
	if err != nil {
		return nil, fmt.Errorf("%w: it does not start: %v", api.ErrBadModule, err)
	}
	defer g.close(ctx)
	res, err := g.call(ctx, abi.ExportVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: %s failed: %v", api.ErrBadModule, abi.ExportVersion, err)
	}
	if v := uint32(res); v != abi.Version {
		return nil, fmt.Errorf("%w: it speaks ABI version %d and this host speaks version %d; rebuild it with a guest SDK for version %d", api.ErrBadModule, v, abi.Version, abi.Version)
	}
	raw, err := g.exchange(ctx, abi.ExportDescribe, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s failed: %v", api.ErrBadModule, abi.ExportDescribe, err)
	}
	m, err := abi.DecodeManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: its manifest does not decode: %v", api.ErrBadModule, err)
	}
	if len(m.Orchestrations) == 0 && len(m.Activities) == 0 {
		return nil, fmt.Errorf("%w: it registers no orchestration and no activity; call durabox.RegisterOrchestration in an init function", api.ErrBadModule)
	}
	if err := checkNames(m); err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrBadModule, err)
	}
	return m, nil
}

// checkNames refuses a manifest that registers a name the ABI refuses
// (abi.CheckName): the host would store it, log it, label metrics and
// serve JSON with it, none of which can hold every byte.
func checkNames(m *abi.Manifest) error {
	for _, name := range m.Orchestrations {
		if err := abi.CheckName("orchestration name", name); err != nil {
			return err
		}
	}
	for _, name := range m.Activities {
		if err := abi.CheckName("activity name", name); err != nil {
			return err
		}
	}
	return nil
}

// deploy validates wasm, stores it at now with the environment its
// activities see (env if replaceEnv, else the one it had when deployed
// before, if it was), and keeps it compiled.
func (r *registry) deploy(ctx context.Context, wasm []byte, env []string, replaceEnv bool, now time.Time) (store.ModuleInfo, error) {
	// Values are secrets: errors show names alone.
	for i, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || k == "":
			return store.ModuleInfo{}, fmt.Errorf("%w: environment variable %d is not of the form KEY=value", api.ErrBadInput, i+1)
		case strings.Contains(kv, "\x00") || !utf8.ValidString(kv):
			return store.ModuleInfo{}, fmt.Errorf("%w: environment variable %q is not UTF-8 text without NUL", api.ErrBadInput, k)
		}
	}
	mod, m, err := r.validate(ctx, wasm)
	if err != nil {
		return store.ModuleInfo{}, err
	}
	hash := hashOf(wasm)
	if !replaceEnv {
		env = nil
		if before, err := r.st.GetModule(ctx, hash); err == nil {
			env = before.Env
		} else if !errors.Is(err, store.ErrNotFound) {
			mod.Close(ctx)
			return store.ModuleInfo{}, fmt.Errorf("host: read the module's environment: %w", err)
		}
	}
	sm := store.Module{Hash: hash, Wasm: wasm, Orchestrations: m.Orchestrations, Activities: m.Activities, Env: env, DeployedAt: now}
	if err := r.st.PutModule(ctx, sm); err != nil {
		mod.Close(ctx)
		return store.ModuleInfo{}, fmt.Errorf("host: store module: %w", err)
	}
	r.keep(ctx, hash, &module{Module: mod, env: env, orchestrations: m.Orchestrations, updates: m.Updates})
	return store.ModuleInfo{Hash: hash, Orchestrations: m.Orchestrations, Activities: m.Activities, Env: env, DeployedAt: now}, nil
}

// remove closes the compiled module with hash, which the store no longer
// has, if it is kept.
func (r *registry) remove(ctx context.Context, hash string) {
	r.mu.Lock()
	m, ok := r.compiled[hash]
	delete(r.compiled, hash)
	r.mu.Unlock()
	if ok {
		m.Close(ctx)
	}
}

// keep caches a compiled module. If one is cached already it keeps that
// one, with the new environment.
func (r *registry) keep(ctx context.Context, hash string, m *module) *module {
	r.mu.Lock()
	defer r.mu.Unlock()
	if have, ok := r.compiled[hash]; ok {
		m.Close(ctx)
		have.env = m.env
		return have
	}
	r.compiled[hash] = m
	return m
}

// cached returns the compiled module with hash, if it is kept.
func (r *registry) cached(hash string) *module {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compiled[hash]
}

// environ returns the environment m's activities see, which deploying m
// again replaces.
func (r *registry) environ(m *module) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m.env
}

// module returns the compiled module with hash, compiling it from the store
// on first use, or an error wrapping ErrCannotRun when this host cannot
// run it. Callers that ask for a module being loaded wait for that load.
//
// The load is no caller's: it runs on its own, and each caller waits for
// it until its own ctx ends. Run under the first caller's ctx, a request
// whose client went away failed the load for every caller waiting on it,
// whose requests were alive, with that client's "context canceled" (500).
func (r *registry) module(ctx context.Context, hash string) (*module, error) {
	r.mu.Lock()
	if m, ok := r.compiled[hash]; ok {
		r.mu.Unlock()
		return m, nil
	}
	if err, ok := r.refused[hash]; ok {
		r.mu.Unlock()
		return nil, err
	}
	if r.closing {
		r.mu.Unlock()
		return nil, fmt.Errorf("host: load module %s: the host is stopping; ask again (%w)", api.Short(hash), api.ErrNotReady)
	}
	l, busy := r.loading[hash]
	if !busy {
		l = &load{done: make(chan struct{})}
		r.loading[hash] = l
		r.loads.Go(func() {
			l.m, l.err = r.load(context.WithoutCancel(ctx), hash)
			r.mu.Lock()
			delete(r.loading, hash)
			r.mu.Unlock()
			close(l.done)
		})
	}
	r.mu.Unlock()
	select {
	case <-l.done:
		return l.m, l.err
	case <-ctx.Done():
		return nil, fmt.Errorf("host: load module %s: %w", api.Short(hash), ctx.Err())
	}
}

// load compiles the module with hash from the store, checks it as deploy
// does, and keeps it. A module that fails the checks is one this host
// cannot run (refused.go); ctx does not end (see module). A panic fails the
// load, so that those waiting for it are answered, and the next use loads
// the module again.
func (r *registry) load(ctx context.Context, hash string) (m *module, err error) {
	defer r.guard.Catch(guard.Module, func(p *guard.Panic) {
		m, err = nil, fmt.Errorf("host: load module %s: %w", api.Short(hash), p)
	}, "module", api.Short(hash))
	guard.MayPanic(guard.PointModule, hash)
	sm, err := r.st.GetModule(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("host: module %s: %w", api.Short(hash), err)
	}
	mod, manifest, err := r.validate(ctx, sm.Wasm)
	if err != nil {
		return nil, r.refuse(hash, err)
	}
	return r.keep(ctx, hash, &module{Module: mod, env: sm.Env, orchestrations: sm.Orchestrations, updates: manifest.Updates}), nil
}

// close waits for the loads running, then closes every module kept; the
// loads asked for after it fail.
func (r *registry) close(ctx context.Context) {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.loads.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.compiled {
		m.Close(ctx)
	}
	r.compiled = nil
}

var errNoRegion = errors.New("the guest returned a region outside its memory")
