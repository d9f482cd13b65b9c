package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/store"
)

// Upgrade checks the open instances of one module against another, and
// unless req.DryRun, moves to it exactly those whose history it replays.
//
// Each instance's current history is replayed on req.To in the sandbox, on
// a fresh guest, while the host serves: the replay has no side effects and
// the instance is not touched. An instance whose history To reproduces is
// compatible; one it does not diverges (where, and both sides, as the
// engine's nondeterminism error says), one it crashes on fails. A real
// upgrade then moves each compatible instance (store.MoveInstance): its
// module changes and a ModuleChanged event records the move in its history,
// in one transaction, only if the instance still has the history that was
// checked and no turn holds it. An instance a turn holds is tried again
// once the turn commits (its new events checked too), a few times; one
// still busy, or that finished or moved meanwhile, is skipped. Instances
// that do not move stay on From, as they were. An instance's activity
// tasks that wait for a worker move with it (To must register each
// activity it has in flight, or the instance fails the check); one a
// worker runs finishes on From.
//
// Replays run req.Parallel at a time (zero: one per CPU). progress, when
// not nil, is called with the plan once the request is accepted, then with
// each instance's result as it is decided, then with the summary; calls do
// not overlap. An error before the plan means the request was refused
// (ErrBadInput, ErrModuleNotFound, ErrNotFound) and nothing changed.
func (h *Host) Upgrade(ctx context.Context, req client.UpgradeRequest, progress func(client.UpgradeLine)) (client.UpgradeReport, error) {
	var report client.UpgradeReport
	from, to, err := h.upgradeModules(ctx, req)
	if err != nil {
		return report, err
	}
	insts, err := h.upgradeInstances(ctx, req.Instances, from)
	if err != nil {
		return report, err
	}
	orchestrations := map[string]int{}
	for _, inst := range insts {
		orchestrations[inst.Name]++
	}
	for _, name := range slices.Sorted(maps.Keys(orchestrations)) {
		if !slices.Contains(to.Orchestrations, name) {
			return report, fmt.Errorf("%w: module %s registers %s, not %q, which %s of module %s run; an upgrade moves instances to a new version of their own orchestrations",
				ErrBadInput, short(to.Hash), names(to.Orchestrations), name, counted(orchestrations[name], "open instance"), short(from.Hash))
		}
	}
	shared := slices.DeleteFunc(slices.Clone(from.Orchestrations), func(n string) bool { return !slices.Contains(to.Orchestrations, n) })
	if len(shared) == 0 {
		return report, fmt.Errorf("%w: module %s registers %s and module %s registers %s: they share no orchestration",
			ErrBadInput, short(from.Hash), names(from.Orchestrations), short(to.Hash), names(to.Orchestrations))
	}
	if len(orchestrations) == 0 {
		// No instance to move: the plan names what the modules share.
		for _, n := range shared {
			orchestrations[n] = 0
		}
	}
	compiled, err := h.reg.module(ctx, to.Hash)
	if err != nil {
		return report, err
	}
	report.Plan = client.UpgradePlan{From: from.Hash, To: to.Hash, Orchestrations: slices.Sorted(maps.Keys(orchestrations)), Instances: len(insts), DryRun: req.DryRun}
	if progress == nil {
		progress = func(client.UpgradeLine) {}
	}
	progress(client.UpgradeLine{Plan: &report.Plan})

	parallel := req.Parallel
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	u := &upgrade{h: h, from: from.Hash, to: to.Hash, activities: to.Activities, mod: compiled, dryRun: req.DryRun}
	var mu sync.Mutex
	work := make(chan store.InstanceSummary)
	var wg sync.WaitGroup
	for range min(parallel, max(len(insts), 1)) {
		wg.Go(func() {
			for inst := range work {
				res := u.one(ctx, inst)
				mu.Lock()
				report.Results = append(report.Results, res)
				report.Summary.Add(res.Outcome)
				progress(client.UpgradeLine{Result: &res})
				mu.Unlock()
			}
		})
	}
	for _, inst := range insts {
		if ctx.Err() != nil {
			break
		}
		work <- inst
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return report, fmt.Errorf("host: upgrade stopped after %d of %d instances: %w", len(report.Results), len(insts), err)
	}
	progress(client.UpgradeLine{Summary: &report.Summary})
	s := report.Summary
	h.opts.Logger.Info("upgrade", "from", short(from.Hash), "to", short(to.Hash), "dryRun", req.DryRun, "instances", len(insts),
		"compatible", s.Compatible, "moved", s.Moved, "diverges", s.Diverges, "fails", s.Fails, "skipped", s.Skipped)
	return report, nil
}

// upgradeModules resolves an upgrade's From and To.
func (h *Host) upgradeModules(ctx context.Context, req client.UpgradeRequest) (from, to store.ModuleInfo, err error) {
	mods, err := h.st.ListModules(ctx)
	if err != nil {
		return from, to, fmt.Errorf("host: list modules: %w", err)
	}
	if req.To == "" {
		// An orchestration's name: its two newest modules.
		var its []store.ModuleInfo
		for _, m := range mods {
			if slices.Contains(m.Orchestrations, req.From) {
				its = append(its, m)
			}
		}
		if len(its) < 2 {
			return from, to, fmt.Errorf("%w: %s registers an orchestration called %s; give FROM and TO as module hashes, or the name of an orchestration with two modules deployed",
				ErrBadInput, counted(len(its), "deployed module"), abi.Quote(req.From))
		}
		return its[1], its[0], nil
	}
	if from, err = pickModule(mods, req.From); err != nil {
		return from, to, err
	}
	if to, err = pickModule(mods, req.To); err != nil {
		return from, to, err
	}
	if from.Hash == to.Hash {
		return from, to, fmt.Errorf("%w: FROM and TO are the same module, %s", ErrBadInput, short(from.Hash))
	}
	return from, to, nil
}

// upgradeInstances returns the open instances of from that an upgrade
// checks: those named (each must exist and be open on from), or all.
func (h *Host) upgradeInstances(ctx context.Context, ids []string, from store.ModuleInfo) ([]store.InstanceSummary, error) {
	if len(ids) == 0 {
		q := store.InstanceQuery{Filter: store.InstanceFilter{ModuleHash: from.Hash, Statuses: []engine.Status{engine.StatusPending, engine.StatusRunning}}, Limit: 1000}
		var insts []store.InstanceSummary
		for {
			page, err := h.st.ListInstances(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("host: instances of module %s: %w", short(from.Hash), err)
			}
			insts = append(insts, page.Instances...)
			if page.Next == "" {
				return insts, nil
			}
			q.After = page.Next
		}
	}
	var insts []store.InstanceSummary
	var wrong []string
	for _, id := range ids {
		inst, err := h.Instance(ctx, id)
		switch {
		case err != nil:
			return nil, err
		case inst.ModuleHash != from.Hash:
			wrong = append(wrong, fmt.Sprintf("%q runs on module %s", id, short(inst.ModuleHash)))
		case inst.Status.IsTerminal():
			wrong = append(wrong, fmt.Sprintf("%q has finished (%s)", id, inst.Status))
		default:
			insts = append(insts, inst.Summary())
		}
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("%w: the instances to upgrade must be open on module %s: %s", ErrBadInput, short(from.Hash), strings.Join(wrong, "; "))
	}
	return insts, nil
}

// upgrade is one upgrade in progress.
type upgrade struct {
	h        *Host
	from, to string
	// activities are the activities To registers.
	activities []string
	mod        *module
	dryRun     bool
}

// moveTries bounds how many times an upgrade tries to move an instance
// that a turn holds or whose history goes on under it.
const moveTries = 5

// one decides, and unless a dry run, carries out, the upgrade of inst.
func (u *upgrade) one(ctx context.Context, inst store.InstanceSummary) client.UpgradeResult {
	res := client.UpgradeResult{InstanceID: inst.ID, Name: inst.Name}
	skip := func(format string, args ...any) client.UpgradeResult {
		res.Outcome, res.Reason = client.UpgradeSkipped, fmt.Sprintf(format, args...)
		return res
	}
	for try := 1; ; try++ {
		cur, err := u.h.Instance(ctx, inst.ID)
		switch {
		case err != nil:
			return skip("%v", err)
		case cur.ModuleHash != u.from:
			return skip("it moved to module %s meanwhile", short(cur.ModuleHash))
		case cur.Status.IsTerminal():
			return skip("it finished meanwhile (%s)", cur.Status)
		}
		history, err := u.h.st.History(ctx, cur.ID, cur.ExecutionID)
		if err != nil {
			return skip("%v", err)
		}
		rep := replay(ctx, u.mod, &u.h.opts, Seed(cur.ID, cur.ExecutionID, history), cur.ID, cur.ExecutionID, history, nil)
		res.Events = len(history)
		switch {
		case rep.Divergence != nil:
			res.Outcome, res.Divergence = client.UpgradeDiverges, rep.Divergence
			return res
		case rep.Failure != "":
			res.Outcome, res.Reason = client.UpgradeFails, rep.Failure
			return res
		}
		for _, a := range engine.InFlight(history).Activities {
			if !slices.Contains(u.activities, a.Name) {
				res.Outcome = client.UpgradeFails
				res.Reason = fmt.Sprintf("module %s does not register activity %q, which the instance has in flight (event %d)", short(u.to), a.Name, a.ScheduleID)
				return res
			}
		}
		switch {
		case u.dryRun:
			res.Outcome = client.UpgradeCompatible
			return res
		}
		now := u.h.opts.Clock()
		err = u.h.st.MoveInstance(ctx, store.Move{
			InstanceID: cur.ID, ExecutionID: cur.ExecutionID, HistoryLen: int64(len(history)), From: u.from, To: u.to, Now: now,
			Event: engine.Event{ID: int64(len(history)) + 1, Kind: engine.ModuleChanged, Time: now, FromModule: u.from, Module: u.to},
		})
		switch {
		case err == nil:
			if l := u.h.cache.take(cur.ID); l != nil {
				l.close(context.WithoutCancel(ctx))
			}
			res.Outcome = client.UpgradeMoved
			return res
		case errors.Is(err, store.ErrBusy) && try == moveTries:
			return skip("a turn held it each of the %d times it was about to move; upgrade it again", moveTries)
		case errors.Is(err, store.ErrChanged) && try == moveTries:
			return skip("its history went on each of the %d times it was about to move; upgrade it again", moveTries)
		case errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrChanged):
			u.h.awaitTurn(ctx, cur.ID, time.Duration(try)*50*time.Millisecond)
		default:
			return skip("%v", err)
		}
	}
}

// awaitTurn waits until a turn of instance id commits, for at most d.
func (h *Host) awaitTurn(ctx context.Context, id string, d time.Duration) {
	changed, stop := h.changed.watch(id)
	defer stop()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-changed:
	case <-t.C:
	}
}

// counted says how many of noun there are: "1 module", "2 modules".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
