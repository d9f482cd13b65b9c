// Package ops carries out a host's operations that are not turns: it
// replays an instance on a module, upgrades the open instances of one
// module to another, resets an instance, exports its repro bundle, purges
// finished instances, removes modules, and applies retention. Package host
// serves them as its Go API (Host.Replay, Host.Upgrade, …).
//
// An operation reads and writes the store itself; what it needs of the
// turns' side of the host (a module compiled, a replay on a fresh guest,
// the live instances dropped, the instance's waiters told) it asks of a
// Runtime. It never runs a turn: a replay writes nothing, and a move or a
// reset is one store write, fenced against the turn it might race.
package ops

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/store"
)

// Runtime is what the operations need of the host that runs turns.
type Runtime interface {
	// Load compiles the module with hash and checks it as deploy does,
	// once, for the replays that follow.
	Load(ctx context.Context, hash string) error
	// Replay runs the turn in on a fresh instance of the module with hash,
	// drawing from seed, writing nothing; the guest's output goes to out
	// (nil: nowhere).
	Replay(ctx context.Context, hash string, seed [32]byte, in engine.TurnInput, out io.Writer) (*engine.TurnResult, error)
	// Forget drops the live instances of ids: their next turn replays
	// them from the store.
	Forget(ctx context.Context, ids ...string)
	// ForgetModule drops the compiled module with hash, which the store no
	// longer has.
	ForgetModule(ctx context.Context, hash string)
	// Watch returns a channel that is closed when instance id next
	// changes, and the function that stops watching.
	Watch(id string) (changed <-chan struct{}, stop func())
	// Changed announces that instance id changed: its waiters and the
	// dispatchers (its work) are woken.
	Changed(id string)
}

// Options are the host's settings the operations use.
type Options struct {
	Clock  func() time.Time
	Logger *slog.Logger
	// Retention and SweepInterval are host.Options's.
	Retention, SweepInterval time.Duration
	// Guard recovers a panic checking one instance of an upgrade, and in a
	// sweep.
	Guard guard.Guard
}

// Ops carries out the operations on a store, for the host that runs
// turns on it.
type Ops struct {
	st   store.Store
	rt   Runtime
	opts Options
}

// New returns the operations on st, for rt.
func New(st store.Store, rt Runtime, opts Options) *Ops {
	return &Ops{st: st, rt: rt, opts: opts}
}

// Instance returns an instance's state, or api.ErrNotFound.
func (o *Ops) Instance(ctx context.Context, id string) (store.Instance, error) {
	inst, err := o.st.GetInstance(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return inst, api.NotFound(id)
	}
	return inst, err
}
