package sandbox

import (
	"context"
	"errors"
	"fmt"

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

// takeSnapshot starts an instance of the rewritten module the normal way
// under snapshotEnv and copies out its state.
func (m *wazeroModule) takeSnapshot(ctx context.Context) (*snapshot, error) {
	inst, err := m.start(ctx, snapshotEnv())
	if err != nil {
		return nil, fmt.Errorf("sandbox: snapshot: %w: %w", errStart, err)
	}
	defer inst.Close(ctx)
	mem := inst.mod.Memory()
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, errors.New("sandbox: snapshot: cannot read the memory")
	}
	s := &snapshot{pages: mem.Size() / pageSize}
	for _, name := range m.layout.Globals {
		g := inst.mod.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("sandbox: snapshot: no global %q", name)
		}
		s.globals = append(s.globals, g.Get())
	}
	if s.memory, err = newImage(b); err != nil {
		return nil, err
	}
	return s, nil
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
	if err := s.setGlobals(mod, m.layout.Globals); err != nil {
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
