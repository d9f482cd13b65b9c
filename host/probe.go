package host

import (
	"context"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/internal/sandbox"
)

// A Probe is a module compiled and checked as Deploy checks it, whose
// orchestrations a caller runs on the raw ABI: each ProbeInstance is one
// wasm instance, started as a host starts one for an orchestration (the
// deterministic WASI, from the module's snapshot), to which the caller
// hands activations it wrote itself, with no store and no engine between.
// The conformance kit's raw cases (package guestkit) run on it.
type Probe struct {
	rt       sandbox.Runtime
	mod      sandbox.Module
	opts     Options
	manifest *abi.Manifest
	exports  []string
}

// NewProbe compiles wasm on the runtime opts name, as a host with opts
// does (its compiled modules in opts.CacheDir, each call under its
// deadline and budgets), and checks it as Deploy does. A module a host
// would refuse is refused with Deploy's words (wrapping
// api.ErrBadModule).
func NewProbe(ctx context.Context, wasm []byte, opts Options) (*Probe, error) {
	p, refusal, err := openProbe(ctx, wasm, opts)
	if err != nil {
		return nil, err
	}
	return p, refusal
}

// openProbe is NewProbe, telling a module the host would refuse (refusal)
// from a runtime that is unknown or does not start (err).
func openProbe(ctx context.Context, wasm []byte, opts Options) (p *Probe, refusal, err error) {
	if err := opts.validate(); err != nil {
		return nil, nil, err
	}
	rt, err := newRuntime(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	mod, m, refusal := validate(ctx, rt, wasm, opts.ActivationTimeout, opts.MemoryLimit)
	if refusal != nil {
		rt.Close(ctx)
		return nil, refusal, nil
	}
	return &Probe{rt: rt, mod: mod, opts: opts, manifest: m, exports: mod.Exports()}, nil, nil
}

// Manifest is what the module registers.
func (p *Probe) Manifest() *abi.Manifest { return p.manifest }

// Exports lists the names of the functions the module exports, sorted.
func (p *Probe) Exports() []string { return p.exports }

// Start starts a fresh wasm instance for the first execution of the
// orchestration instance id: its randomness is seeded as a host seeds that
// instance's (Seed(id, 1)).
func (p *Probe) Start(ctx context.Context, id string) (*ProbeInstance, error) {
	g, err := startOrchestration(ctx, p.mod, &p.opts, Seed(id, 1), nil, nil)
	if err != nil {
		return nil, err
	}
	return &ProbeInstance{g: g}, nil
}

// Close releases the module and its runtime; close every ProbeInstance
// first.
func (p *Probe) Close(ctx context.Context) error {
	p.mod.Close(ctx)
	return p.rt.Close(ctx)
}

// A ProbeInstance is one wasm instance of a Probe's module, used by one
// goroutine at a time. After a call that fails it is unusable: close it.
type ProbeInstance struct {
	g *orchestrationGuest
}

// Activate sets the guest's logical clock from a, hands it a (as
// durabox_activate's request, in a buffer from durabox_alloc) and returns
// the bytes of the ActivationResult it answers, undecoded. The error says
// why the call failed, in the host's words (a trap, a deadline, os.Exit).
func (i *ProbeInstance) Activate(a *abi.Activation) ([]byte, error) {
	return i.g.activate(a)
}

// Exchange calls export with req written into the guest (as Activate
// does; nil: no arguments) and returns the bytes of the region it
// returns: durabox_describe, durabox_query.
func (i *ProbeInstance) Exchange(export string, req []byte) ([]byte, error) {
	return i.g.exchange(i.g.ctx, export, req)
}

// Call calls export with args and returns its first result (0 if none):
// durabox_alloc, durabox_abi_version.
func (i *ProbeInstance) Call(export string, args ...uint64) (uint64, error) {
	return i.g.call(i.g.ctx, export, args...)
}

// Close releases the instance.
func (i *ProbeInstance) Close() { i.g.close(i.g.ctx) }
