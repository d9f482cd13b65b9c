package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/host/internal/seed"
	"github.com/durabox/durabox/store"
)

// Reset carries out Host.Reset (package host says what it does).
func (o *Ops) Reset(ctx context.Context, id string, req api.ResetRequest) (api.ResetPlan, error) {
	var out api.ResetPlan
	inst, err := o.Instance(ctx, id)
	if err != nil {
		return out, err
	}
	history, err := o.st.History(ctx, id, inst.ExecutionID)
	if err != nil {
		return out, fmt.Errorf("host: reset %q: %w", id, err)
	}
	if req.Execution != 0 && (req.Execution != inst.ExecutionID || req.Events != len(history)) {
		return out, fmt.Errorf("%w: instance %q is in execution %d with %d events, and the reset was planned for execution %d with %d; plan it again",
			api.ErrChanged, id, inst.ExecutionID, len(history), req.Execution, req.Events)
	}
	mod, err := o.moduleFor(ctx, inst, req.Module)
	if err != nil {
		return out, err
	}
	plan, err := engine.PlanReset(history, req.ToEvent)
	if err != nil {
		return out, fmt.Errorf("%w: instance %q, execution %d: %v", api.ErrBadInput, id, inst.ExecutionID, err)
	}
	marker := engine.Event{Kind: engine.ExecutionReset, Module: mod.Hash, SeedExecution: seed.Execution(inst.ExecutionID, history), By: identity.From(ctx).Name,
		Reason: fmt.Sprintf("reset from execution %d, which had %d events, to its event %d", inst.ExecutionID, len(history), req.ToEvent)}
	if mod.Hash != inst.ModuleHash {
		marker.FromModule = inst.ModuleHash
	}
	out = api.ResetPlan{InstanceID: id, Execution: inst.ExecutionID, Events: len(history), ToEvent: req.ToEvent, FromModule: inst.ModuleHash, Module: mod.Hash,
		Discarded: plan.Discarded, RunAgain: reruns(plan), Raise: plan.Raise}
	for _, ev := range plan.Discarded {
		if ev.Kind == engine.SubOrchestrationScheduled {
			out.Detached = append(out.Detached, ev.InstanceID)
		}
	}
	if out.Next, err = o.resetReplay(ctx, mod.Hash, id, inst.ExecutionID, plan.Kept, marker); err != nil {
		return out, err
	}
	if out.Taken, err = o.taken(ctx, out.Next); err != nil {
		return out, err
	}
	if req.DryRun {
		return out, nil
	}
	customStatus := ""
	for _, ev := range plan.Kept {
		if ev.Kind == engine.CustomStatusSet {
			customStatus = ev.CustomStatus
		}
	}
	// The store knows a history's length by its last event's id, which is
	// past its length in a history that lost an event (the damage a reset
	// to before it repairs).
	err = o.st.ResetInstance(ctx, store.Reset{
		InstanceID: id, ExecutionID: inst.ExecutionID, HistoryLen: history[len(history)-1].ID, Module: mod.Hash, Kept: plan.Kept, CustomStatus: customStatus,
		Attributes: engine.Attributes(plan.Kept),
		Marker:     marker, InFlight: plan.InFlight, Raise: plan.Raise, Detach: out.Detached, Now: o.opts.Clock(),
	})
	switch {
	case errors.Is(err, store.ErrBusy):
		return out, fmt.Errorf("%w: a turn of instance %q is running; try again once it has committed (%v)", api.ErrBusy, id, err)
	case errors.Is(err, store.ErrChanged):
		return out, fmt.Errorf("%w: %v; plan the reset again", api.ErrChanged, err)
	case err != nil:
		return out, fmt.Errorf("host: reset %q: %w", id, err)
	}
	o.rt.Forget(context.WithoutCancel(ctx), id)
	o.opts.Logger.Info("instance reset", "instance", id, "execution", inst.ExecutionID+1, "toEvent", req.ToEvent, "module", api.Short(mod.Hash))
	o.rt.Changed(id)
	out.Done = true
	return out, nil
}

// resetReplay replays the kept events of execution on the module and the
// first turn of the new execution, the next, after them, writing nothing,
// and returns the events that turn records after the kept ones: the
// marker, and the commands of the last kept step (the children they start
// have the ids the new execution derives).
func (o *Ops) resetReplay(ctx context.Context, hash, id string, execution int64, kept []engine.Event, marker engine.Event) ([]engine.Event, error) {
	in := engine.TurnInput{History: kept, Messages: []engine.Event{marker}, Now: o.opts.Clock(), Execution: execution + 1}
	res, err := o.rt.Replay(ctx, hash, seed.Of(id, marker.SeedExecution), in, nil)
	if err == nil && res.Err != nil {
		err = res.Err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: module %s, on the %d events the reset keeps of execution %d: %v", api.ErrDiverges, api.Short(hash), len(kept), execution, err)
	}
	return res.NewEvents, nil
}

// taken returns the ids of the children events start that an instance
// already has.
func (o *Ops) taken(ctx context.Context, events []engine.Event) ([]string, error) {
	var ids []string
	for _, ev := range events {
		if ev.Kind != engine.SubOrchestrationScheduled && ev.Kind != engine.OrchestrationChained {
			continue
		}
		_, err := o.st.GetInstance(ctx, ev.InstanceID)
		switch {
		case err == nil:
			ids = append(ids, ev.InstanceID)
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("host: reset: is child instance %q taken: %w", ev.InstanceID, err)
		}
	}
	return ids, nil
}

// reruns lists the activities that ended, completed or failed, in the
// discarded events.
func reruns(plan *engine.ResetPlan) []api.Rerun {
	scheduled := map[int64]engine.Event{}
	for _, ev := range append(plan.Kept[:len(plan.Kept):len(plan.Kept)], plan.Discarded...) {
		if ev.Kind == engine.ActivityScheduled {
			scheduled[ev.ID] = ev
		}
	}
	last := plan.Kept[len(plan.Kept)-1].ID
	var out []api.Rerun
	for _, ev := range plan.Discarded {
		if ev.Kind != engine.ActivityCompleted && ev.Kind != engine.ActivityFailed {
			continue
		}
		s := scheduled[ev.ScheduleID]
		outcome := api.RerunCompleted
		if ev.Kind == engine.ActivityFailed {
			outcome = api.RerunFailed
		}
		out = append(out, api.Rerun{Name: s.Name, Input: s.Input, Scheduled: s.ID, Completed: ev.ID, Outcome: outcome, IfCalled: s.ID > last})
	}
	return out
}
