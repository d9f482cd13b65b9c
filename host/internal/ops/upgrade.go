package ops

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
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/host/internal/seed"
	"github.com/durabox/durabox/store"
)

// Upgrade carries out Host.Upgrade (package host says what it does).
func (o *Ops) Upgrade(ctx context.Context, req api.UpgradeRequest, progress func(api.UpgradeLine)) (api.UpgradeReport, error) {
	var report api.UpgradeReport
	sc, err := o.upgradeScope(ctx, req)
	if err != nil {
		return report, err
	}
	orchestrations := map[string]int{}
	for _, inst := range sc.insts {
		orchestrations[inst.Name]++
	}
	for _, name := range slices.Sorted(maps.Keys(orchestrations)) {
		if !slices.Contains(sc.to.Orchestrations, name) {
			return report, fmt.Errorf("%w: module %s registers %s, not %q, which %s of module %s run; an upgrade moves instances to a new version of their own orchestrations",
				api.ErrBadInput, api.Short(sc.to.Hash), Names(sc.to.Orchestrations), name, counted(orchestrations[name], "open instance"), shorts(sc.from))
		}
	}
	if sc.noneShared != nil {
		return report, sc.noneShared
	}
	if len(orchestrations) == 0 {
		// No instance to move: the plan names what the modules share.
		for _, n := range sc.shared {
			orchestrations[n] = 0
		}
	}
	if err := o.rt.Load(ctx, sc.to.Hash); err != nil {
		return report, err
	}
	report.Plan = api.UpgradePlan{From: sc.from, To: sc.to.Hash, Orchestrations: slices.Sorted(maps.Keys(orchestrations)), Instances: len(sc.insts), DryRun: req.DryRun}
	if progress == nil {
		progress = func(api.UpgradeLine) {}
	}
	progress(api.UpgradeLine{Plan: &report.Plan})

	parallel := req.Parallel
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	u := &upgrade{o: o, to: sc.to.Hash, activities: sc.to.Activities, dryRun: req.DryRun}
	var mu sync.Mutex
	work := make(chan store.InstanceSummary)
	var wg sync.WaitGroup
	for range min(parallel, max(len(sc.insts), 1)) {
		wg.Go(func() {
			for inst := range work {
				res := u.guarded(ctx, inst)
				mu.Lock()
				report.Results = append(report.Results, res)
				report.Summary.Add(res.Outcome)
				progress(api.UpgradeLine{Result: &res})
				mu.Unlock()
			}
		})
	}
	for _, inst := range sc.insts {
		if ctx.Err() != nil {
			break
		}
		work <- inst
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return report, fmt.Errorf("host: upgrade stopped after %d of %d instances: %w", len(report.Results), len(sc.insts), err)
	}
	progress(api.UpgradeLine{Summary: &report.Summary})
	s := report.Summary
	o.opts.Logger.Info("upgrade", "from", shorts(sc.from), "to", api.Short(sc.to.Hash), "dryRun", req.DryRun, "instances", len(sc.insts),
		"compatible", s.Compatible, "moved", s.Moved, "diverges", s.Diverges, "fails", s.Fails, "skipped", s.Skipped)
	return report, nil
}

// upgradeScope is what an upgrade checks: the open instances, the modules
// they run on and the module they move to.
type upgradeScope struct {
	insts []store.InstanceSummary
	// from are the hashes of the modules the instances run on, newest
	// first: FROM, or with an orchestration's name, those of its older
	// modules that have instances (the one before the newest, if none has).
	from []string
	to   store.ModuleInfo
	// shared are the orchestrations From and To share, which the plan
	// names when there is no instance; noneShared refuses From and To
	// that share none, once the instances' own orchestrations are checked
	// (which says more).
	shared     []string
	noneShared error
}

// upgradeScope resolves an upgrade's modules and instances.
func (o *Ops) upgradeScope(ctx context.Context, req api.UpgradeRequest) (upgradeScope, error) {
	var sc upgradeScope
	mods, err := o.st.ListModules(ctx)
	if err != nil {
		return sc, fmt.Errorf("host: list modules: %w", err)
	}
	if req.To != "" {
		from, err := o.upgradePair(mods, req, &sc)
		if err != nil {
			return sc, err
		}
		sc.from = []string{from.Hash}
		sc.insts, err = o.upgradeInstances(ctx, req.Instances, store.InstanceFilter{ModuleHash: from.Hash}, []string{from.Hash},
			"open on module "+api.Short(from.Hash))
		return sc, err
	}
	// An orchestration's name: from its older modules to its newest.
	var its []string
	for _, m := range mods {
		if slices.Contains(m.Orchestrations, req.From) {
			its = append(its, m.Hash)
			if len(its) == 1 {
				sc.to = m
			}
		}
	}
	if len(its) < 2 {
		return sc, fmt.Errorf("%w: %s registers an orchestration called %s; give FROM and TO as module hashes, or the name of an orchestration with two modules deployed",
			api.ErrBadInput, counted(len(its), "deployed module"), abi.Quote(req.From))
	}
	older := its[1:]
	sc.shared = []string{req.From}
	sc.insts, err = o.upgradeInstances(ctx, req.Instances, store.InstanceFilter{Name: req.From}, older,
		fmt.Sprintf("open instances of %s on a module older than %s, its newest", req.From, api.Short(sc.to.Hash)))
	if err != nil {
		return sc, err
	}
	for _, hash := range older {
		if slices.ContainsFunc(sc.insts, func(inst store.InstanceSummary) bool { return inst.ModuleHash == hash }) {
			sc.from = append(sc.from, hash)
		}
	}
	if len(sc.from) == 0 {
		sc.from = older[:1]
	}
	return sc, nil
}

// upgradePair resolves an upgrade's FROM and TO, given as hashes, into
// from and sc.to, and the orchestrations they share into sc.shared (or
// sc.noneShared).
func (o *Ops) upgradePair(mods []store.ModuleInfo, req api.UpgradeRequest, sc *upgradeScope) (from store.ModuleInfo, err error) {
	if from, err = pickModule(mods, req.From); err != nil {
		return from, err
	}
	if sc.to, err = pickModule(mods, req.To); err != nil {
		return from, err
	}
	if from.Hash == sc.to.Hash {
		return from, fmt.Errorf("%w: FROM and TO are the same module, %s", api.ErrBadInput, api.Short(from.Hash))
	}
	sc.shared = slices.DeleteFunc(slices.Clone(from.Orchestrations), func(n string) bool { return !slices.Contains(sc.to.Orchestrations, n) })
	if len(sc.shared) == 0 {
		sc.noneShared = fmt.Errorf("%w: module %s registers %s and module %s registers %s: they share no orchestration",
			api.ErrBadInput, api.Short(from.Hash), Names(from.Orchestrations), api.Short(sc.to.Hash), Names(sc.to.Orchestrations))
	}
	return from, nil
}

// upgradeInstances returns the instances an upgrade checks: those named
// (each must be one of them: of the filter's orchestration, if it names
// one, and open on one of the modules from, which what says in words), or
// every open instance the filter selects on those modules.
func (o *Ops) upgradeInstances(ctx context.Context, ids []string, f store.InstanceFilter, from []string, what string) ([]store.InstanceSummary, error) {
	if len(ids) == 0 {
		f.Statuses = []engine.Status{engine.StatusPending, engine.StatusRunning}
		q := store.InstanceQuery{Filter: f, Limit: 1000}
		var insts []store.InstanceSummary
		for {
			page, err := o.st.ListInstances(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("host: instances to upgrade: %w", err)
			}
			for _, inst := range page.Instances {
				if slices.Contains(from, inst.ModuleHash) {
					insts = append(insts, inst)
				}
			}
			if page.Next == "" {
				return insts, nil
			}
			q.After = page.Next
		}
	}
	var insts []store.InstanceSummary
	var wrong []string
	for _, id := range ids {
		inst, err := o.Instance(ctx, id)
		switch {
		case err != nil:
			return nil, err
		case f.Name != "" && inst.Name != f.Name:
			wrong = append(wrong, fmt.Sprintf("%q is an instance of %s", id, inst.Name))
		case !slices.Contains(from, inst.ModuleHash):
			wrong = append(wrong, fmt.Sprintf("%q runs on module %s", id, api.Short(inst.ModuleHash)))
		case inst.Status.IsTerminal():
			wrong = append(wrong, fmt.Sprintf("%q has finished (%s)", id, inst.Status))
		default:
			insts = append(insts, inst.Summary())
		}
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("%w: the instances to upgrade must be %s: %s", api.ErrBadInput, what, strings.Join(wrong, "; "))
	}
	return insts, nil
}

// upgrade is one upgrade in progress.
type upgrade struct {
	o  *Ops
	to string
	// activities are the activities To registers.
	activities []string
	dryRun     bool
}

// moveTries bounds how many times an upgrade tries to move an instance
// that a turn holds or whose history goes on under it.
const moveTries = 5

// guarded is one, where a panic fails the upgrade of inst only.
func (u *upgrade) guarded(ctx context.Context, inst store.InstanceSummary) (res api.UpgradeResult) {
	defer u.o.opts.Guard.Catch(guard.Upgrade, func(p *guard.Panic) {
		res = api.UpgradeResult{InstanceID: inst.ID, Name: inst.Name, From: inst.ModuleHash, Outcome: api.UpgradeFails,
			Reason: "the host panicked upgrading it (a bug in durabox; its log has the stack): " + p.Error()}
	}, "instance", inst.ID)
	return u.one(ctx, inst)
}

// one decides, and unless a dry run, carries out, the upgrade of inst.
func (u *upgrade) one(ctx context.Context, inst store.InstanceSummary) api.UpgradeResult {
	guard.MayPanic(guard.PointUpgrade, inst.ID)
	res := api.UpgradeResult{InstanceID: inst.ID, Name: inst.Name, From: inst.ModuleHash}
	skip := func(format string, args ...any) api.UpgradeResult {
		res.Outcome, res.Reason = api.UpgradeSkipped, fmt.Sprintf(format, args...)
		return res
	}
	for try := 1; ; try++ {
		cur, err := u.o.Instance(ctx, inst.ID)
		switch {
		case err != nil:
			return skip("%v", err)
		case cur.ModuleHash != inst.ModuleHash:
			return skip("it moved to module %s meanwhile", api.Short(cur.ModuleHash))
		case cur.Status.IsTerminal():
			return skip("it finished meanwhile (%s)", cur.Status)
		}
		history, err := u.o.st.History(ctx, cur.ID, cur.ExecutionID)
		if err != nil {
			return skip("%v", err)
		}
		rep := u.o.replay(ctx, u.to, seed.Of(cur.ID, cur.ExecutionID, history), cur.ID, cur.ExecutionID, history)
		res.Events = len(history)
		switch {
		case rep.Divergence != nil:
			res.Outcome, res.Divergence = api.UpgradeDiverges, rep.Divergence
			return res
		case rep.Failure != "":
			res.Outcome, res.Reason = api.UpgradeFails, rep.Failure
			return res
		}
		for _, a := range engine.InFlight(history).Activities {
			if !slices.Contains(u.activities, a.Name) {
				res.Outcome = api.UpgradeFails
				res.Reason = fmt.Sprintf("module %s does not register activity %q, which the instance has in flight (event %d)", api.Short(u.to), a.Name, a.ScheduleID)
				return res
			}
		}
		switch {
		case u.dryRun:
			res.Outcome = api.UpgradeCompatible
			return res
		}
		now := u.o.opts.Clock()
		err = u.o.st.MoveInstance(ctx, store.Move{
			InstanceID: cur.ID, ExecutionID: cur.ExecutionID, HistoryLen: int64(len(history)), From: inst.ModuleHash, To: u.to, Now: now,
			Event: engine.Event{ID: int64(len(history)) + 1, Kind: engine.ModuleChanged, Time: now, FromModule: inst.ModuleHash, Module: u.to, By: identity.From(ctx).Name},
		})
		switch {
		case err == nil:
			u.o.rt.Forget(context.WithoutCancel(ctx), cur.ID)
			res.Outcome = api.UpgradeMoved
			return res
		case errors.Is(err, store.ErrBusy) && try == moveTries:
			return skip("a turn held it each of the %d times it was about to move; upgrade it again", moveTries)
		case errors.Is(err, store.ErrChanged) && try == moveTries:
			return skip("its history went on each of the %d times it was about to move; upgrade it again", moveTries)
		case errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrChanged):
			u.o.awaitTurn(ctx, cur.ID, time.Duration(try)*50*time.Millisecond)
		default:
			return skip("%v", err)
		}
	}
}

// awaitTurn waits until a turn of instance id commits, for at most d.
func (o *Ops) awaitTurn(ctx context.Context, id string, d time.Duration) {
	changed, stop := o.rt.Watch(id)
	defer stop()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-changed:
	case <-t.C:
	}
}

// shorts abbreviates module hashes, for messages: "3f2a…, 9c1b…".
func shorts(hashes []string) string {
	var s []string
	for _, h := range hashes {
		s = append(s, api.Short(h))
	}
	return strings.Join(s, ", ")
}

// counted says how many of noun there are: "1 module", "2 modules".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
