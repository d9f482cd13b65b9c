package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/store"
)

// Replay replays one execution of an instance's history on a module, in the
// sandbox, and reports whether the code reproduces it: where it diverges
// (the engine's nondeterminism error), or crashes, or that it reproduces
// every event. req.Module is a module hash or a unique prefix of one (empty:
// the instance's own module), which must register the instance's
// orchestration; req.Execution an execution number (0: the current one).
// Nothing is written, and the instance is not touched: the replay has no
// side effects, since the sandbox answers every call the orchestration
// makes from its history. (An earlier execution may have run on another
// module than the instance's current one.)
func (h *Host) Replay(ctx context.Context, id string, req api.ReplayRequest) (api.ReplayReport, error) {
	inst, err := h.Instance(ctx, id)
	if err != nil {
		return api.ReplayReport{}, err
	}
	mod, err := h.moduleFor(ctx, inst, req.Module)
	if err != nil {
		return api.ReplayReport{}, err
	}
	execution := req.Execution
	switch {
	case execution == 0:
		execution = inst.ExecutionID
	case execution < 0 || execution > inst.ExecutionID:
		return api.ReplayReport{}, fmt.Errorf("%w: instance %q has executions 1 to %d, not %d", api.ErrBadInput, id, inst.ExecutionID, execution)
	}
	history, err := h.st.History(ctx, id, execution)
	if err != nil {
		return api.ReplayReport{}, fmt.Errorf("host: replay %q: %w", id, err)
	}
	compiled, err := h.reg.module(ctx, mod.Hash)
	if err != nil {
		return api.ReplayReport{}, err
	}
	rep := replay(ctx, compiled, &h.opts, Seed(id, execution, history), id, execution, history, nil)
	rep.Module = mod.Hash
	if want := inst.Status; rep.OK() && execution == inst.ExecutionID && rep.Status != want {
		rep.Failure = fmt.Sprintf("the replay ends %s, and the instance is %s", rep.Status, want)
	}
	return rep, nil
}

// replay replays one execution's history on a fresh instance of mod whose
// randomness comes from seed, writing nothing, and reports how it went.
// The guest's output goes to out (nil: nowhere), replayed steps included.
func replay(ctx context.Context, mod sandbox.Module, opts *Options, seed [32]byte, id string, execution int64, history []engine.Event, out io.Writer) api.ReplayReport {
	rep := api.ReplayReport{InstanceID: id, Execution: execution, Events: len(history)}
	res, err := run(ctx, mod, opts, seed, engine.TurnInput{History: history, Now: lastTime(history)}, out)
	if err != nil {
		rep.Failure = err.Error()
		return rep
	}
	rep.Status = res.Status
	var nd *engine.NondeterminismError
	switch {
	case errors.As(res.Err, &nd):
		rep.Divergence = &api.Divergence{Code: nd.Code, EventID: nd.EventID, History: nd.History, Emitted: nd.Emitted, Message: nd.Error()}
	case res.Err != nil:
		rep.Failure = res.Err.Error()
	}
	return rep
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

// lastTime is the time of history's last event: the time a replay's turn
// runs at, so that what it reports does not depend on when it ran.
func lastTime(history []engine.Event) (t time.Time) {
	if len(history) > 0 {
		t = history[len(history)-1].Time
	}
	return t
}

// moduleFor resolves ref, a module hash or a unique prefix of one (empty:
// the instance's module), to a deployed module that registers inst's
// orchestration.
func (h *Host) moduleFor(ctx context.Context, inst store.Instance, ref string) (store.ModuleInfo, error) {
	if ref == "" {
		ref = inst.ModuleHash
	}
	mod, err := h.resolveModule(ctx, ref)
	if err != nil {
		return mod, err
	}
	if !slices.Contains(mod.Orchestrations, inst.Name) {
		return mod, fmt.Errorf("%w: module %s registers %s, not %q, which instance %q runs", api.ErrBadInput, short(mod.Hash), names(mod.Orchestrations), inst.Name, inst.ID)
	}
	return mod, nil
}

// resolveModule finds the deployed module ref names: its hash, or a prefix
// of it that no other deployed module's hash has, in either case.
func (h *Host) resolveModule(ctx context.Context, ref string) (store.ModuleInfo, error) {
	mods, err := h.st.ListModules(ctx)
	if err != nil {
		return store.ModuleInfo{}, fmt.Errorf("host: list modules: %w", err)
	}
	return pickModule(mods, ref)
}

// pickModule finds the module ref names among mods (api.PickModule).
func pickModule(mods []store.ModuleInfo, ref string) (store.ModuleInfo, error) {
	hashes := make([]string, len(mods))
	for i, m := range mods {
		hashes[i] = m.Hash
	}
	hash, err := api.PickModule(hashes, ref)
	if err != nil {
		return store.ModuleInfo{}, err
	}
	return mods[slices.IndexFunc(mods, func(m store.ModuleInfo) bool { return m.Hash == hash })], nil
}

// names shows a list of names in messages.
func names(list []string) string {
	if len(list) == 0 {
		return "no orchestration"
	}
	quoted := make([]string, len(list))
	for i, n := range list {
		quoted[i] = strconv.Quote(n)
	}
	return strings.Join(quoted, ", ")
}
