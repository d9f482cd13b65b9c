package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/store"
	"golang.org/x/time/rate"
)

// batchRunner takes the instances of the running batches (batch.go), on
// one host: it claims the batches no other host runs
// (store.Batches.ClaimBatches), and takes each one's instances in the
// order of their ids, recording each (StepBatch) before it takes the
// next, so that the runner that takes a batch over after a restart, or
// on another host, goes on at the instance after the last recorded. An
// instance whose change was made and not recorded (the host died
// between the two) is changed again: a cancel, a terminate, a reset (it
// is planned for the execution it finds) and an upgrade (the instance
// is on the module already) do nothing the second time; a raise raises
// its event again.
type batchRunner struct {
	h *Host
	// owner names this runner in the batches it holds.
	owner string
	// limits are the rate limiters of the batches it holds, by id, on the
	// host's clock.
	limits map[int64]*rate.Limiter
}

// batchPage is how many instances of a batch the runner reads at once,
// and the most it takes of one batch in one pass, so that batches take
// turns.
const batchPage = 64

func newBatchRunner(h *Host) *batchRunner {
	var b [8]byte
	rand.Read(b[:])
	return &batchRunner{h: h, owner: "host-" + hex.EncodeToString(b[:]), limits: map[int64]*rate.Limiter{}}
}

// runBatches runs the batches until ctx is done, then lets go of those it
// holds. Each pass takes what the batches' rates allow now; then it waits
// until the next instance a rate allows, it is woken (a batch started),
// or Options.BatchPoll has passed.
func (h *Host) runBatches(ctx context.Context) {
	r := newBatchRunner(h)
	defer func() {
		if err := h.st.ReleaseBatches(context.WithoutCancel(ctx), r.owner); err != nil {
			h.opts.Logger.Warn("cannot let go of the batches this host ran; another host takes them when its lease ends", "err", err)
		}
	}()
	for ctx.Err() == nil {
		wait := h.opts.BatchPoll
		if next, err := r.pass(ctx); err != nil {
			if ctx.Err() == nil && !errors.As(err, new(*guard.Panic)) {
				h.opts.Logger.Error("cannot run the batches; trying again", "err", err, "in", wait)
			}
		} else if !next.IsZero() {
			wait = min(wait, max(next.Sub(h.opts.Clock()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-h.batchWork:
		case <-t.C:
		}
		t.Stop()
	}
}

// pass claims the batches this host may run and takes what each one's
// rate allows now (up to batchPage instances of each), and returns when
// to look again: at once when one has more to take, when a rate allows
// the next instance, or zero for the poll.
func (r *batchRunner) pass(ctx context.Context) (next time.Time, err error) {
	defer r.h.guard.Catch(guard.Fetch, func(p *guard.Panic) { next, err = time.Time{}, p }, "work", "batch")
	batches, err := r.h.st.ClaimBatches(ctx, r.owner, r.h.opts.Clock(), r.h.opts.BatchLease)
	if err != nil {
		return time.Time{}, err
	}
	held := map[int64]*rate.Limiter{}
	for _, b := range batches {
		lim := r.limits[b.ID]
		if lim == nil && b.Rate > 0 {
			lim = rate.NewLimiter(rate.Limit(b.Rate), 1)
		}
		held[b.ID] = lim
		due, err := r.steps(ctx, b, lim)
		if err != nil {
			return time.Time{}, err
		}
		if !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	r.limits = held
	return next, nil
}

// steps takes the next instances of b, as many as lim allows now (nil:
// no limit), up to batchPage, and returns when the next is due (zero
// when b ended, or the runner lost it).
func (r *batchRunner) steps(ctx context.Context, b store.Batch, lim *rate.Limiter) (time.Time, error) {
	var req api.BatchRequest
	if err := json.Unmarshal(b.Args, &req); err != nil {
		return time.Time{}, fmt.Errorf("batch %d: its stored arguments do not decode (%w); stop it (durabox batch stop %d)", b.ID, err, b.ID)
	}
	req.Action = b.Action
	// Each change is made as the batch's starter's, as if through the API.
	as := identity.With(ctx, identity.Caller{Name: b.By, Role: "admin"})
	items, err := r.h.st.BatchItems(ctx, b.ID, b.LastInstance, batchPage, false)
	if err != nil {
		return time.Time{}, err
	}
	last := b.LastInstance
	for _, it := range items {
		now := r.h.opts.Clock()
		if lim != nil {
			res := lim.ReserveN(now, 1)
			if d := res.DelayFrom(now); d > 0 {
				res.CancelAt(now)
				return now.Add(d), nil
			}
		}
		outcome, detail := r.h.batchApply(as, req, it.InstanceID)
		now = r.h.opts.Clock()
		err := r.h.st.StepBatch(ctx, store.BatchStep{ID: b.ID, Owner: r.owner, After: last, Instance: it.InstanceID, Outcome: outcome, Detail: detail,
			Now: now, LeaseUntil: now.Add(r.h.opts.BatchLease)})
		if errors.Is(err, store.ErrLeaseLost) {
			return time.Time{}, nil // stopped, or taken over: nothing more of it here
		}
		if err != nil {
			return time.Time{}, err
		}
		last = it.InstanceID
	}
	if len(items) == batchPage {
		return r.h.opts.Clock(), nil
	}
	err = r.h.st.StepBatch(ctx, store.BatchStep{ID: b.ID, Owner: r.owner, After: last, Now: r.h.opts.Clock()})
	if errors.Is(err, store.ErrLeaseLost) {
		return time.Time{}, nil
	}
	if err == nil {
		r.h.opts.Logger.Info("batch completed", "batch", b.ID, "action", b.Action, "matched", b.Matched)
	}
	return time.Time{}, err
}

// batchTries is how many times a batch tries a reset or an upgrade of an
// instance that a turn holds, or that changed under it, each after its
// next change (or batchRetry).
const (
	batchTries = 5
	batchRetry = time.Second
)

// batchApply carries out req on instance id through the operation on
// one instance, and says what came of it: done, skipped (nothing to do:
// the instance finished, is gone, or is where the action would put it),
// or failed, and why.
func (h *Host) batchApply(ctx context.Context, req api.BatchRequest, id string) (store.ItemOutcome, string) {
	var err error
	for try := 1; ; try++ {
		stop := func() {}
		var changed <-chan struct{}
		if req.Action == api.BatchReset || req.Action == api.BatchUpgrade {
			changed, stop = h.changed.watch(id)
		}
		err = h.batchOne(ctx, req, id)
		if try == batchTries || !(errors.Is(err, api.ErrBusy) || errors.Is(err, api.ErrChanged)) {
			stop()
			break
		}
		t := time.NewTimer(batchRetry)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		stop()
	}
	var skip *skipped
	switch {
	case err == nil:
		return store.ItemDone, ""
	case errors.As(err, &skip), errors.Is(err, api.ErrNotFound), errors.Is(err, api.ErrFinished):
		return store.ItemSkipped, wireText(err)
	}
	return store.ItemFailed, wireText(err)
}

// skipped is why an instance has nothing for a batch to do.
type skipped struct{ why string }

func (s *skipped) Error() string { return s.why }

// wireText is an error as the API shows it: without the "host: " the
// host's errors begin with.
func wireText(err error) string {
	s := err.Error()
	if len(s) > 6 && s[:6] == "host: " {
		return s[6:]
	}
	return s
}

// batchOne carries out req on instance id, once.
func (h *Host) batchOne(ctx context.Context, req api.BatchRequest, id string) error {
	switch req.Action {
	case api.BatchCancel:
		return h.Cancel(ctx, id, req.Reason)
	case api.BatchTerminate:
		return h.Terminate(ctx, id, req.Reason)
	case api.BatchRaise:
		return h.Raise(ctx, id, req.Event, req.Data, req.Persistent)
	case api.BatchReset:
		return h.batchReset(ctx, req, id)
	case api.BatchUpgrade:
		return h.batchUpgrade(ctx, req, id)
	}
	return fmt.Errorf("%w: the action %q is not one a batch takes", api.ErrBadInput, req.Action)
}

// batchReset resets instance id to req.ResetTo in its current execution,
// as Reset does, if the instance still has the history the point was
// found in.
func (h *Host) batchReset(ctx context.Context, req api.BatchRequest, id string) error {
	inst, err := h.Instance(ctx, id)
	if err != nil {
		return err
	}
	history, err := h.st.History(ctx, id, inst.ExecutionID)
	if err != nil {
		return fmt.Errorf("host: reset %q: %w", id, err)
	}
	to, err := resetPoint(req.ResetTo)
	if err != nil {
		return err
	}
	if to == 0 {
		if to, err = namedPoint(history, req.ResetTo); err != nil {
			return err
		}
	}
	_, err = h.Reset(ctx, id, api.ResetRequest{ToEvent: to, Module: req.Module, Execution: inst.ExecutionID, Events: len(history)})
	return err
}

// namedPoint finds the event a named reset point (api.ResetLastFailure,
// api.ResetStart) keeps up to in history, the current execution's.
func namedPoint(history []engine.Event, point string) (int64, error) {
	start := -1
	for i, ev := range history {
		if ev.Kind == engine.OrchestrationStarted {
			start = i
			break
		}
	}
	if start < 0 {
		return 0, &skipped{"its current execution has not begun"}
	}
	if point == api.ResetStart {
		return int64(start + 1), nil
	}
	failed := -1
	for i := len(history) - 1; i > start && failed < 0; i-- {
		switch history[i].Kind {
		case engine.ActivityFailed, engine.SubOrchestrationFailed, engine.OrchestrationFailed:
			failed = i
		}
	}
	if failed < 0 {
		return 0, &skipped{"its current execution has no failure to reset to"}
	}
	// Keep what came before the failure, back to where a step begins.
	for n := int64(failed); n > int64(start); n-- {
		if _, err := engine.PlanReset(history, n); err == nil {
			return n, nil
		}
	}
	return int64(start + 1), nil
}

// batchUpgrade moves instance id to req.Module, as Upgrade does for one
// instance, if its history replays there.
func (h *Host) batchUpgrade(ctx context.Context, req api.BatchRequest, id string) error {
	inst, err := h.Instance(ctx, id)
	if err != nil {
		return err
	}
	if inst.Status.IsTerminal() {
		return &skipped{fmt.Sprintf("it is %s", inst.Status)}
	}
	to, err := h.ops.ResolveModule(ctx, req.Module)
	if err != nil {
		return err
	}
	if inst.ModuleHash == to.Hash {
		return &skipped{"it runs on module " + api.Short(to.Hash) + " already"}
	}
	rep, err := h.Upgrade(ctx, api.UpgradeRequest{From: inst.ModuleHash, To: to.Hash, Instances: []string{id}, Parallel: 1}, nil)
	if err != nil {
		return err
	}
	for _, res := range rep.Results {
		switch res.Outcome {
		case api.UpgradeMoved:
			return nil
		case api.UpgradeSkipped:
			return &skipped{res.Reason}
		case api.UpgradeDiverges:
			why := res.Reason
			if res.Divergence != nil {
				why = res.Divergence.Message
			}
			return fmt.Errorf("module %s does not replay its history: %s", api.Short(to.Hash), why)
		default:
			return fmt.Errorf("module %s fails on its history: %s", api.Short(to.Hash), res.Reason)
		}
	}
	return fmt.Errorf("the upgrade to module %s did not check it", api.Short(to.Hash))
}
