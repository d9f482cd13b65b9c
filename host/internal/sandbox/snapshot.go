package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/durabox/durabox/host/internal/wasi"
)

// A Go guest's whole state lives in its linear memory and its mutable
// globals (the Go runtime does not change its tables), so the state
// _initialize leaves behind under a deterministic Env, taken once, starts
// any number of instances without running _initialize again.

// errStart wraps the error of a module whose start failed under
// snapshotEnv.
var errStart = errors.New("the module does not start")

// snapshot is the state of a module's instance right after _initialize ran
// under snapshotEnv.
type snapshot struct {
	// memory holds the linear memory, a whole number of pages.
	memory *image
	pages  uint32
	// globals are the values of the mutable globals, in Layout.Globals'
	// order.
	globals []uint64
	// hot are the pages of memory its instances write.
	hot hotPages
}

// snapshotEnv is a deterministic Env with no output. Its _initialize runs
// under its Starting(), the fixed Env every orchestration instance starts
// under (a zero seed, the logical clock at zero, no environment), so the
// snapshot is a function of the module alone, the same byte for byte every
// time it is made, in any process, and the same state a normal start
// reaches.
func snapshotEnv() *wasi.Env { return wasi.NewDeterministic([32]byte{}, nil, nil) }

// newSnapshot copies mem, the linear memory of an instance that just ran
// _initialize under snapshotEnv, and takes globals, the values of its
// mutable globals in Layout.Globals' order.
func newSnapshot(mem []byte, globals []uint64) (*snapshot, error) {
	im, err := newImage(mem)
	if err != nil {
		return nil, err
	}
	return &snapshot{memory: im, pages: uint32(len(mem) / pageSize), globals: globals}, nil
}

// snapshots makes a module's snapshot on its first use and keeps it, on
// either runtime.
type snapshots struct {
	mu sync.Mutex
	// snap is the snapshot, once made; err says why the module has none.
	snap   *snapshot
	err    error
	closed bool
}

// errModuleClosed is returned by Instantiate on a closed module.
var errModuleClosed = errors.New("sandbox: instantiate: the module is closed")

// get returns the snapshot, made by take on the first call. It returns nil
// and no error for a module that has none because its start fails under
// the snapshot's Env: its instances start the normal way, and fail or not
// as they would have. That is a property of the module, so it holds in
// every process; a failure that is not (the context ended, no temporary
// file) is returned and not kept, and the next call tries again.
func (c *snapshots) get(ctx context.Context, take func(context.Context) (*snapshot, error)) (*snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return nil, errModuleClosed
	case c.snap != nil || c.err != nil:
		return c.snap, nil
	}
	s, err := take(ctx)
	switch {
	case err == nil:
		c.snap = s
	case ctx.Err() != nil || !errors.Is(err, errStart):
		return nil, err
	default:
		c.err = err
	}
	return c.snap, nil
}

// isClosed reports whether close was called.
func (c *snapshots) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// close closes the snapshot, and then fn (which closes the rest of the
// module), once: it reports false and does nothing when it was already
// called. Live instances keep their mappings of the snapshot's memory.
func (c *snapshots) close(fn func() error) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, nil
	}
	c.closed = true
	err := fn()
	if c.snap != nil {
		err = errors.Join(err, c.snap.memory.Close())
		c.snap = nil
	}
	return true, err
}

// starts are the ways a runtime's module starts an instance, a T.
type starts[T any] interface {
	// snapshot returns the module's snapshot, or nil if it has none.
	snapshot(context.Context) (*snapshot, error)
	// takeIdle returns an instance reset for reuse, if there is one.
	takeIdle(*wasi.Env) (T, bool)
	fromSnapshot(context.Context, *snapshot, *wasi.Env) (T, error)
	// start starts an instance the normal way.
	start(context.Context, *wasi.Env) (T, error)
}

// instantiate starts an instance of m answering to env: with fromSnapshot,
// from the snapshot, reusing a reset instance when there is one; the
// normal way otherwise, or when the module has no snapshot.
func instantiate[T Instance](ctx context.Context, m starts[T], env *wasi.Env, fromSnapshot bool) (Instance, error) {
	start := m.start
	if fromSnapshot {
		s, err := m.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		if s != nil {
			if inst, ok := m.takeIdle(env); ok {
				return inst, nil
			}
			start = func(ctx context.Context, env *wasi.Env) (T, error) { return m.fromSnapshot(ctx, s, env) }
		}
	}
	inst, err := start(ctx, env)
	if err != nil {
		return nil, err
	}
	return inst, nil
}

// snapshotOf starts an instance of m the normal way under snapshotEnv,
// and takes its state with state.
func snapshotOf[T Instance](ctx context.Context, m starts[T], state func(T) (*snapshot, error)) (*snapshot, error) {
	inst, err := m.start(ctx, snapshotEnv())
	if err != nil {
		return nil, fmt.Errorf("sandbox: snapshot: %w: %w", errStart, err)
	}
	defer inst.Close(ctx)
	return state(inst)
}

// takeSnapshot starts an instance of the rewritten module the normal way
// under snapshotEnv and copies out its state.
func (m *wazeroModule) takeSnapshot(ctx context.Context) (*snapshot, error) {
	return snapshotOf(ctx, m, wazeroState)
}

// wazeroState copies out the state of inst, an instance of a rewritten
// module.
func wazeroState(inst *wazeroInstance) (*snapshot, error) {
	mem := inst.mod.Memory()
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, errors.New("sandbox: snapshot: cannot read the memory")
	}
	var globals []uint64
	for _, name := range inst.module.layout.Globals {
		g := inst.mod.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("sandbox: snapshot: no global %q", name)
		}
		globals = append(globals, g.Get())
	}
	return newSnapshot(b, globals)
}

// fromSnapshot creates an instance whose memory and globals are the
// snapshot's.
func (m *wazeroModule) fromSnapshot(ctx context.Context, s *snapshot, env *wasi.Env) (*wazeroInstance, error) {
	var mapped bool
	mod, err := m.r.InstantiateModule(experimental.WithMemoryAllocator(ctx, s.memory.allocator(&mapped)), m.cm, moduleConfig())
	if err != nil {
		return nil, fmt.Errorf("sandbox: instantiate: %w", err)
	}
	fail := func(err error) (*wazeroInstance, error) {
		mod.Close(ctx)
		return nil, fmt.Errorf("sandbox: instantiate from a snapshot: %w", err)
	}
	mem := mod.Memory()
	if _, ok := mem.Grow(s.pages - mem.Size()/pageSize); !ok {
		return fail(fmt.Errorf("cannot grow the memory to %d pages", s.pages))
	}
	if !mapped {
		b, _ := mem.Read(0, mem.Size())
		if err := s.memory.copyTo(b); err != nil {
			return fail(err)
		}
	}
	if err := setGlobals(mod, m.layout.Globals, s.globals); err != nil {
		return fail(err)
	}
	inst := m.instance(mod, env)
	if mapped {
		b, _ := mem.Read(0, mem.Size())
		s.hot.prefault(b)
		inst.snapshot = s
	}
	return inst, nil
}

// moduleConfig is the configuration of every instance: anonymous, so that
// any number of instances of a module live at once; no start function, so
// that _initialize runs under the Env like any call.
func moduleConfig() wazero.ModuleConfig {
	return wazero.NewModuleConfig().WithName("").WithStartFunctions()
}
