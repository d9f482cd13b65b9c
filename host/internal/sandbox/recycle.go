package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/durabox/durabox/host/internal/wasi"
)

// A new instance costs wazero's instantiation (building a function table of
// tens of thousands of entries for a Go module: about 0.4 ms) and the faults
// of its first writes, and an orchestration needs one for every new
// instance. So an instance started from a snapshot that closes healthy is
// not thrown away: it is reset to the snapshot and kept for the next one.
// The reset is exact. The pages the instance wrote are the private ones of
// its mapping of the snapshot (/proc/self/pagemap tells which); they get the
// snapshot's bytes back, and the pages it never wrote are still the
// snapshot's own. Every mutable global gets its snapshot value (all but the
// yield budget, which the guest cannot see). The tables hold what
// instantiation put in them unless the code changes them, and a module whose
// code can is never reset. A memory that grew past the snapshot's size
// cannot shrink, so such an instance is closed instead; so is one that
// failed, whose state is undefined, and every one where the system does not
// tell which pages were written.

// maxIdle bounds the reset instances a module keeps.
const maxIdle = 32

// takeIdle returns a reset instance of m, now answering to env, or nil.
func (m *wazeroModule) takeIdle(env *wasi.Env) *wazeroInstance {
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	n := len(m.idle)
	if n == 0 {
		return nil
	}
	reset := *m.idle[n-1]
	m.idle = m.idle[:n-1]
	reset.env, reset.closed = env, false
	return &reset
}

// recycle resets inst, which started from snapshot s and has not failed,
// and keeps it for a later Instantiate. written has a bit per page of the
// snapshot's memory, set for those inst wrote. It reports false when inst
// cannot be reset or is not wanted, and the caller closes it.
func (m *wazeroModule) recycle(inst *wazeroInstance, s *snapshot, written []uint64) bool {
	mem := inst.mod.Memory()
	if m.layout.ChangesTables || uint64(mem.Size()) != uint64(s.pages)*pageSize || !m.wantsIdle() {
		return false
	}
	b, _ := mem.Read(0, mem.Size())
	if err := s.memory.restore(b, written); err != nil {
		return false
	}
	if err := s.setGlobals(inst.mod, m.layout.Globals); err != nil {
		return false
	}
	inst.env = nil // the next user's comes with takeIdle
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	if m.closedIdle || len(m.idle) >= maxIdle {
		return false
	}
	m.idle = append(m.idle, inst)
	return true
}

// wantsIdle reports whether m keeps another reset instance.
func (m *wazeroModule) wantsIdle() bool {
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	return !m.closedIdle && len(m.idle) < maxIdle
}

// closeIdle closes the reset instances and keeps no more.
func (m *wazeroModule) closeIdle(ctx context.Context) error {
	m.idleMu.Lock()
	idle := m.idle
	m.idle, m.closedIdle = nil, true
	m.idleMu.Unlock()
	var err error
	for _, inst := range idle {
		err = errors.Join(err, inst.mod.Close(ctx))
	}
	return err
}

// setGlobals sets the mutable globals named names of mod to the snapshot's
// values.
func (s *snapshot) setGlobals(mod api.Module, names []string) error {
	for i, name := range names {
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("no mutable global %q", name)
		}
		g.Set(s.globals[i])
	}
	return nil
}
