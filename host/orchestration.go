package host

import (
	"context"
	"fmt"
	"io"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/host/internal/wasi"
)

// orchestrationGuest drives an orchestration in a deterministic sandbox: it
// sets the logical clock and the replay flag before each activation.
type orchestrationGuest struct {
	*wasmGuest
	ctx context.Context
	env *wasi.Env
	// log, when set, is where the guest's output goes, silent while it
	// replays.
	log *guestLog
	// maxPayload bounds what one of its commands may carry; zero means no
	// bound.
	maxPayload int
}

// startOrchestration starts a fresh instance of mod for an orchestration
// whose randomness comes from seed. What the guest prints goes to out (nil:
// nowhere), and log, when set, is told when the guest replays.
func startOrchestration(ctx context.Context, mod sandbox.Module, opts *Options, seed [32]byte, out io.Writer, log *guestLog) (*orchestrationGuest, error) {
	if out == nil {
		out = io.Discard
	}
	stderr := newCrashLog()
	env := wasi.NewDeterministic(seed, out, io.MultiWriter(out, stderr))
	env.SetStepBudget(opts.StepBudget)
	g, err := newGuest(ctx, mod, guestConfig{env: env, timeout: opts.ActivationTimeout, stderr: stderr, memoryLimit: opts.MemoryLimit, fromSnapshot: true})
	if err != nil {
		return nil, err
	}
	return &orchestrationGuest{wasmGuest: g, ctx: ctx, env: env, log: log, maxPayload: opts.MaxPayload}, nil
}

func (o *orchestrationGuest) Activate(a *abi.Activation) ([]abi.Command, error) {
	raw, err := o.activate(a)
	if err != nil {
		return nil, err
	}
	res, err := abi.DecodeActivationResult(raw)
	if err != nil {
		return nil, fmt.Errorf("its commands do not decode: %w", err)
	}
	if o.maxPayload > 0 {
		if err := checkCommands(res.Commands, o.maxPayload); err != nil {
			return nil, err
		}
	}
	if err := checkCommandJSON(res.Commands); err != nil {
		return nil, err
	}
	return res.Commands, nil
}

// activate applies a with the guest's clock and replay flag set from it,
// and returns the bytes of the ActivationResult it answers.
func (o *orchestrationGuest) activate(a *abi.Activation) ([]byte, error) {
	o.env.SetActivation(a)
	if o.log != nil {
		o.log.setReplaying(a.Replaying)
	}
	raw, err := o.exchange(o.ctx, abi.ExportActivate, abi.EncodeActivation(a))
	if o.log != nil {
		o.log.endStep()
	}
	return raw, err
}

// run runs one turn of an execution on a fresh instance of mod, writing
// nothing: for replays, which must end with history, and for the plan of a
// reset, which goes on from it. It fails when the module does not start.
func run(ctx context.Context, mod sandbox.Module, opts *Options, seed [32]byte, in engine.TurnInput, out io.Writer) (*engine.TurnResult, error) {
	g, err := startOrchestration(ctx, mod, opts, seed, out, nil)
	if err != nil {
		return nil, fmt.Errorf("the module does not start: %w", err)
	}
	defer g.close(ctx)
	// A replay reproduces what a host took, whatever limit this one has.
	g.maxPayload = 0
	l := live{exec: engine.NewExecution(), guest: g}
	return l.turn(in)
}

// Query asks the guest the query req between two of its steps. What the
// query changes in the guest's Env (its random stream, its clocks) is put
// back after it (wasi.Env.Aside), so the steps that follow see what they
// would have seen without it; what it prints is not logged, as a UI that
// polls a query would otherwise fill the log. The step's deadline and
// budget bound it.
func (o *orchestrationGuest) Query(req *abi.QueryRequest) (*abi.QueryResult, error) {
	defer o.env.Aside()()
	if o.log != nil {
		o.log.setReplaying(true)
	}
	raw, err := o.exchange(o.ctx, abi.ExportQuery, abi.EncodeQueryRequest(req))
	if err != nil {
		return nil, err
	}
	res, err := abi.DecodeQueryResult(raw)
	if err != nil {
		return nil, fmt.Errorf("its answer does not decode: %w", err)
	}
	return res, nil
}
