package host

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/ops"
)

// Replayer replays histories on modules with the sandbox alone: no store,
// no host running. durabox replay uses it for repro bundles, and package
// host/replaytest for the histories authors keep beside their code.
type Replayer struct {
	reg  *registry
	opts Options
}

// NewReplayer returns a Replayer. Of opts it uses ActivationTimeout,
// MemoryLimit and CacheDir (where compiled modules are kept; empty means
// nowhere), as a host does; zero values mean the host's defaults.
func NewReplayer(opts Options) (*Replayer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	rt, err := newRuntime(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	return &Replayer{reg: newRegistry(rt, nil, opts, guard.Guard{Log: opts.Logger}), opts: opts}, nil
}

// Close releases the compiled modules and the wasm runtime.
func (r *Replayer) Close() error {
	ctx := context.Background()
	rt := r.reg.rt
	r.reg.close(ctx)
	return rt.Close(ctx)
}

// Recording is one execution of an instance, to replay.
type Recording struct {
	InstanceID string
	// Execution is the execution's number, from 1.
	Execution int64
	// Seed is the seed of its random stream (what Seed returns for it).
	Seed [32]byte
	// History is its history, from event 1.
	History []engine.Event
}

// Replay replays rec on the module wasm, which is checked as Host.Deploy
// checks a module (ErrBadModule) and must register the orchestration the
// history starts, and reports whether the code reproduces the history.
// Everything the guest prints goes to out (nil: nowhere), for every step:
// unlike a host, which keeps replayed steps silent, a Replayer shows the
// guest's log.
func (r *Replayer) Replay(ctx context.Context, wasm []byte, rec Recording, out io.Writer) (api.ReplayReport, error) {
	hash := hashOf(wasm)
	mod := r.reg.cached(hash)
	if mod == nil {
		compiled, manifest, err := r.reg.validate(ctx, wasm)
		if err != nil {
			return api.ReplayReport{}, err
		}
		mod = r.reg.keep(ctx, hash, &module{Module: compiled, orchestrations: manifest.Orchestrations})
	}
	for _, ev := range rec.History {
		if ev.Kind == engine.OrchestrationStarted && !slices.Contains(mod.orchestrations, ev.Name) {
			return api.ReplayReport{}, fmt.Errorf("%w: module %s registers %s, not %q, whose history this is", api.ErrBadInput, api.Short(hash), ops.Names(mod.orchestrations), ev.Name)
		}
	}
	res, err := run(ctx, mod, &r.opts, rec.Seed, ops.ReplayInput(rec.History), out)
	rep := ops.Report(rec.InstanceID, rec.Execution, rec.History, res, err)
	rep.Module = hash
	return rep, nil
}
