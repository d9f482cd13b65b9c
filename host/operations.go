package host

import (
	"context"
	"io"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/host/internal/ops"
	"github.com/durabox/durabox/store"
)

// The operations that are not turns, carried out by package
// host/internal/ops: each method here is one of its, on this host.

// Swept is what one Sweep deleted.
type Swept = ops.Swept

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
	return h.ops.Replay(ctx, id, req)
}

// Upgrade checks the open instances of older modules against a new one,
// and unless req.DryRun, moves to it exactly those whose history it
// replays.
//
// With req.To, the instances are those open on the module req.From (or
// those of req.Instances, each open on it). Without, req.From names an
// orchestration: the newest module that registers it is To, and the
// instances are those of the orchestration open on any older module (or
// those of req.Instances, each one of them); the plan's From lists the
// modules they run on, newest first.
//
// Each instance's current history is replayed on To in the sandbox, on a
// fresh guest, while the host serves: the replay has no side effects and
// the instance is not touched. An instance whose history To reproduces is
// compatible; one it does not diverges (where, and both sides, as the
// engine's nondeterminism error says), one it crashes on fails. A real
// upgrade then moves each compatible instance (store.MoveInstance): its
// module changes and a ModuleChanged event records the move in its history,
// in one transaction, only if the instance still has the history that was
// checked and no turn holds it. An instance a turn holds is tried again
// once the turn commits (its new events checked too), a few times; one
// still busy, or that finished or moved meanwhile, is skipped. Instances
// that do not move stay where they were. An instance's activity tasks that
// wait for a worker move with it (To must register each activity it has in
// flight, or the instance fails the check); one a worker runs finishes on
// the module it started on.
//
// Replays run req.Parallel at a time (zero: one per CPU). progress, when
// not nil, is called with the plan once the request is accepted, then with
// each instance's result as it is decided, then with the summary; calls do
// not overlap. An error before the plan means the request was refused
// (api.ErrBadInput, api.ErrModuleNotFound, api.ErrNotFound) and nothing changed.
func (h *Host) Upgrade(ctx context.Context, req api.UpgradeRequest, progress func(api.UpgradeLine)) (api.UpgradeReport, error) {
	return h.ops.Upgrade(ctx, req, progress)
}

// Reset starts a new execution of an instance that keeps the current
// execution's history up to event req.ToEvent and goes on from there on
// module req.Module (a hash or a unique prefix of one; empty: its own),
// typically code patched after a bug. It works on a finished instance too
// (a failed one, most often), which runs again.
//
// First it plans (engine.PlanReset): the events kept and discarded, the
// activities that had completed after the reset point and will run again
// (those in flight at the reset point are queued again; those scheduled
// after it run again if the code calls them again), the events raised from
// outside in the discarded part (raised again), the children the discarded
// part started (they go on, reporting to nobody), and, from a replay of the
// kept events on the module, what the new execution records first: the
// reset marker and the commands of the last kept step, which runs again on
// the module, and the ids of the children it starts that an instance has
// already (which cannot start). A module that does not replay the kept
// events is refused (api.ErrDiverges). With req.DryRun it stops there.
// Otherwise it resets the instance (store.ResetInstance), in one
// transaction, only if no turn holds it (api.ErrBusy) and it still has the
// history planned with: the current one, or the one req.Execution and
// req.Events name (api.ErrChanged). The old execution's history stays,
// readable by its number.
func (h *Host) Reset(ctx context.Context, id string, req api.ResetRequest) (api.ResetPlan, error) {
	return h.ops.Reset(ctx, id, req)
}

// Export returns the repro bundle of an instance (package host/bundle): the
// module it runs on, the history and random seed of every execution whose
// history is kept (retention deletes those of executions that continued as
// new long ago), and its input; enough to replay it with no host and no
// database (Replayer).
func (h *Host) Export(ctx context.Context, id string) (*bundle.Bundle, error) {
	return h.ops.Export(ctx, id)
}

// Purge deletes a finished instance (engine.Status.IsTerminal) with the
// history of every execution and whatever still waits for it (raised
// events, timers, activity tasks), and frees its id for a new instance. Its
// children live on; a child it waited for no longer reports to it. An
// instance that has not finished is refused with api.ErrNotFinished: cancel or
// terminate it first, or wait for it to end. Purging is for good: the
// history is not kept anywhere else.
func (h *Host) Purge(ctx context.Context, id string) error {
	return h.ops.Purge(ctx, id)
}

// PurgeMatching purges, as Purge does, every finished instance f selects
// (an instance that has not finished never is, whatever f says), and
// returns how many. With dryRun it purges nothing and returns how many it
// would. It deletes a batch at a time: an error may come after some were
// purged, and n says how many.
func (h *Host) PurgeMatching(ctx context.Context, f store.InstanceFilter, dryRun bool) (int, error) {
	return h.ops.PurgeMatching(ctx, f, dryRun)
}

// RemoveModule deletes a deployed module that no instance runs on, not even
// a finished one (purge those first), and frees what the host holds for it.
// New instances of its orchestrations then run on the newest module left
// that registers them. A module in use is refused with api.ErrModuleInUse,
// naming instances that use it.
func (h *Host) RemoveModule(ctx context.Context, hash string) error {
	return h.ops.RemoveModule(ctx, hash)
}

// Sweep applies Options.Retention once, at the host's clock: it purges the
// instances that finished more than Retention ago and deletes the history
// of the executions that continued as new more than Retention ago (their
// instances go on), the batches that ended (completed or stopped) more
// than Retention ago, with their items, and the records of the audit log
// older than Retention (AppendAudit). Run calls it every SweepInterval; with no Retention it
// does nothing. It deletes a batch at a time, so it may return an error
// after it deleted some.
func (h *Host) Sweep(ctx context.Context) (Swept, error) {
	return h.ops.Sweep(ctx)
}

// opsRuntime is what the operations ask of the host's turns' side
// (ops.Runtime).
type opsRuntime struct{ h *Host }

func (r opsRuntime) Load(ctx context.Context, hash string) error {
	_, err := r.h.reg.module(ctx, hash)
	return err
}

func (r opsRuntime) Replay(ctx context.Context, hash string, seed [32]byte, in engine.TurnInput, out io.Writer) (*engine.TurnResult, error) {
	mod, err := r.h.reg.module(ctx, hash)
	if err != nil {
		return nil, err
	}
	return run(ctx, mod, &r.h.opts, seed, in, out)
}

func (r opsRuntime) Forget(ctx context.Context, ids ...string) { r.h.cache.drop(ctx, ids...) }

func (r opsRuntime) ForgetModule(ctx context.Context, hash string) { r.h.reg.remove(ctx, hash) }

func (r opsRuntime) Watch(id string) (<-chan struct{}, func()) { return r.h.changed.watch(id) }

func (r opsRuntime) Changed(id string) {
	r.h.orchestrationWork.Notify()
	r.h.activityWork.Notify()
	r.h.changed.notify(id)
}
