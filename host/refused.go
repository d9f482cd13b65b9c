package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/durabox/durabox/host/api"
)

// A module in the store may be one this host cannot run: another host
// deployed it, with the other runtime (wasmtime refuses a module whose
// loops its rewrite cannot count, which wazero runs as it is) or other
// settings (a smaller memory limit, a shorter deadline for its
// initialization), or an older Durabox deployed it (one that took a module
// without the sched_yield import). That is the
// host's matter, not the instance's, and a host setting must never write a
// failure into an instance's history. So when the checks Deploy makes
// refuse a module that the host loads from the store, the registry
// remembers why (refuse), says so once in the log, and the host leaves the
// module's work where it is: its fetches pass over the module's instances
// and activity tasks (the skip of store.Store's LockNextInstances and
// LockNextActivities), which wait, neither locked nor counted as
// delivered, for a host that can run the module. GET /v1/modules says why
// (api.Module.Refused), and so do the warnings of each of its
// instances' details.
//
// A host learns this when it loads the module: at start for the modules
// with work waiting (warm), else when work for it first comes. That first
// turn or activity task is then given back untouched, but its delivery
// was counted when it was taken.

// refuse remembers that this host cannot run the module with hash, for
// cause (what the checks Deploy makes said), logs it the first time, and
// returns the error that says so.
func (r *registry) refuse(hash string, cause error) error {
	err := fmt.Errorf("%w %s: %s", api.ErrCannotRun, api.Short(hash), strings.TrimPrefix(cause.Error(), api.ErrBadModule.Error()+": "))
	r.mu.Lock()
	had, first := r.refused[hash], false
	if had == nil {
		r.refused[hash], first = err, true
		r.skip = append(slices.Clone(r.skip), hash)
		slices.Sort(r.skip)
	} else {
		err = had
	}
	r.mu.Unlock()
	if first {
		r.log.Warn("this host cannot run a module in its store; its instances and activities wait for a host that can", "module", api.Short(hash), "reason", cause)
	}
	return err
}

// refusal returns why this host cannot run the module with hash (an
// error wrapping ErrCannotRun), or nil if it can, or has not loaded it.
func (r *registry) refusal(hash string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused[hash]
}

// skipped returns the hashes of the modules this host cannot run, sorted:
// what its fetches pass over. The caller must not change the slice.
func (r *registry) skipped() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skip
}

// Refused returns why this host cannot run the module with hash (an error
// wrapping ErrCannotRun), or nil if it can or has not yet had to load it:
// a host loads a module when it starts, if the module has work waiting,
// and otherwise when work for it first comes.
func (h *Host) Refused(hash string) error { return h.reg.refusal(hash) }
