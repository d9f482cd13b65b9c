package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/seed"
	"github.com/durabox/durabox/store"
)

// Replay carries out Host.Replay (package host says what it does).
func (o *Ops) Replay(ctx context.Context, id string, req api.ReplayRequest) (api.ReplayReport, error) {
	inst, err := o.Instance(ctx, id)
	if err != nil {
		return api.ReplayReport{}, err
	}
	mod, err := o.moduleFor(ctx, inst, req.Module)
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
	history, err := o.st.History(ctx, id, execution)
	if err != nil {
		return api.ReplayReport{}, fmt.Errorf("host: replay %q: %w", id, err)
	}
	rep := o.replay(ctx, mod.Hash, seed.Of(id, execution, history), id, execution, history)
	rep.Module = mod.Hash
	if want := inst.Status; rep.OK() && execution == inst.ExecutionID && rep.Status != want {
		rep.Failure = fmt.Sprintf("the replay ends %s, and the instance is %s", rep.Status, want)
	}
	return rep, nil
}

// replay replays one execution's history on a fresh instance of the
// module with hash whose randomness comes from seed, writing nothing, and
// reports how it went.
func (o *Ops) replay(ctx context.Context, hash string, seed [32]byte, id string, execution int64, history []engine.Event) api.ReplayReport {
	res, err := o.rt.Replay(ctx, hash, seed, ReplayInput(history), nil)
	return Report(id, execution, history, res, err)
}

// ReplayInput is the turn that replays history, all of it, at the time of
// its last event, so that what the replay reports does not depend on when
// it ran.
func ReplayInput(history []engine.Event) engine.TurnInput {
	in := engine.TurnInput{History: history}
	if len(history) > 0 {
		in.Now = history[len(history)-1].Time
	}
	return in
}

// Report is how the replay of an execution's history went, from the turn
// that replayed it (ReplayInput): the turn's result res, or the error that
// kept it from running.
func Report(id string, execution int64, history []engine.Event, res *engine.TurnResult, err error) api.ReplayReport {
	rep := api.ReplayReport{InstanceID: id, Execution: execution, Events: len(history)}
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

// moduleFor resolves ref, a module hash or a unique prefix of one (empty:
// the instance's module), to a deployed module that registers inst's
// orchestration.
func (o *Ops) moduleFor(ctx context.Context, inst store.Instance, ref string) (store.ModuleInfo, error) {
	if ref == "" {
		ref = inst.ModuleHash
	}
	mod, err := o.ResolveModule(ctx, ref)
	if err != nil {
		return mod, err
	}
	if !slices.Contains(mod.Orchestrations, inst.Name) {
		return mod, fmt.Errorf("%w: module %s registers %s, not %q, which instance %q runs", api.ErrBadInput, api.Short(mod.Hash), Names(mod.Orchestrations), inst.Name, inst.ID)
	}
	return mod, nil
}

// ResolveModule finds the deployed module ref names: its hash, or a prefix
// of it that no other deployed module's hash has, in either case.
func (o *Ops) ResolveModule(ctx context.Context, ref string) (store.ModuleInfo, error) {
	mods, err := o.st.ListModules(ctx)
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

// Names shows a list of orchestration names in messages.
func Names(list []string) string {
	if len(list) == 0 {
		return "no orchestration"
	}
	quoted := make([]string, len(list))
	for i, n := range list {
		quoted[i] = strconv.Quote(n)
	}
	return strings.Join(quoted, ", ")
}
