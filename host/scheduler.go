package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/store"
)

// runSchedules fires the schedules' slots until ctx is done. Each pass
// reads every schedule and decides each slot that is due (fireDue); then
// it waits until the next slot is due, it is woken (a schedule created,
// resumed or triggered) or Options.SchedulePoll has passed, whichever
// comes first: the poll finds what it was not told of (another host's
// changes, a run that ended while a slot waited for it). Several hosts
// on one store may decide the same slot at once: the store fires it
// once (store.Schedules.FireSchedule), and the others read it again.
func (h *Host) runSchedules(ctx context.Context) {
	for ctx.Err() == nil {
		wait := h.opts.SchedulePoll
		if next, err := h.scheduleOnce(ctx); err != nil {
			if ctx.Err() == nil && !errors.As(err, new(*guard.Panic)) {
				h.opts.Logger.Error("cannot read the schedules; trying again", "err", err, "in", wait)
			}
		} else if !next.IsZero() {
			wait = min(wait, max(next.Sub(h.opts.Clock()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-h.scheduleWork:
		case <-t.C:
		}
		t.Stop()
	}
}

// scheduleOnce decides every slot due now, and returns when the next one
// is due (zero for none). The schedules are decided at once, up to
// firesAtOnce at a time: a slot's fire is a commit, and schedules due
// together (every one whose cron says "0 * * * *") would otherwise each
// wait for the commits of those before them, the last firing that many
// commits late; at once, their commits share a transaction (SQLite's
// group commit) or the server's flush (PostgreSQL). A panic is an error
// of its schedule: the scheduler serves every schedule, so it carries on.
func (h *Host) scheduleOnce(ctx context.Context) (next time.Time, err error) {
	defer h.guard.Catch(guard.Fetch, func(p *guard.Panic) { next, err = time.Time{}, p }, "work", "schedule")
	all, err := h.st.ListSchedules(ctx)
	if err != nil {
		return time.Time{}, err
	}
	dues, errs := make([]time.Time, len(all)), make([]error, len(all))
	var wg sync.WaitGroup
	limit := make(chan struct{}, firesAtOnce)
	for i, sc := range all {
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			defer h.guard.Catch(guard.Fetch, func(p *guard.Panic) { errs[i] = p }, "work", "schedule", "schedule", sc.Name)
			dues[i], errs[i] = h.fireDue(ctx, sc)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return time.Time{}, nil
	}
	for i, sc := range all {
		if h.scheduleFailed(sc.Name, errs[i]) {
			continue
		}
		if due := dues[i]; !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next, nil
}

// firesAtOnce bounds the schedules one pass decides at once.
const firesAtOnce = 16

// scheduleFailed logs the error of the schedule name's pass, once for as
// long as the schedule fails alike, and reports whether there was one.
func (h *Host) scheduleFailed(name string, err error) bool {
	text := ""
	if err != nil {
		text = err.Error()
	}
	if last, _ := h.scheduleErrs.Swap(name, text); err != nil && last != text {
		h.opts.Logger.Error("cannot fire a schedule; trying again at each pass (said once until the error changes)", "schedule", name, "err", err)
	}
	return err != nil
}

// maxFires bounds the slots one pass decides for one schedule, so that a
// schedule with many slots to catch up on does not hold up the others;
// the next pass goes on at once.
const maxFires = 64

// fireDue decides the slots of sc due now, one at a time, each from the
// schedule as the store holds it, and returns when its next slot is due
// (zero when paused, or when it cannot say).
func (h *Host) fireDue(ctx context.Context, sc store.Schedule) (time.Time, error) {
	sl, err := slotsOf(sc)
	if err != nil {
		return time.Time{}, fmt.Errorf("the stored schedule does not read (%w); delete it and create it again", err)
	}
	for range maxFires {
		if sc.Paused {
			return time.Time{}, nil
		}
		now := h.opts.Clock()
		f, due, err := h.decide(ctx, sc, sl, now)
		if err != nil || f == nil {
			return due, err
		}
		run, err := h.st.FireSchedule(ctx, *f)
		if err == nil {
			h.fired(sc, *f, run)
			h.trace.fired(ctx, sc, *f, run)
			if run.Outcome == store.RunBuffered && sc.Overlap == store.OverlapCancelOther {
				h.cancelRun(ctx, sc)
			}
		} else if errors.Is(err, store.ErrNotFound) {
			return time.Time{}, nil // deleted meanwhile
		} else if !errors.Is(err, store.ErrChanged) {
			return time.Time{}, err
		}
		// Fired, or fired or changed meanwhile by another: read it again.
		if sc, err = h.st.GetSchedule(ctx, sc.Name); errors.Is(err, store.ErrNotFound) {
			return time.Time{}, nil
		} else if err != nil {
			return time.Time{}, err
		}
	}
	return h.opts.Clock(), nil
}

// decide returns what to do with sc now: a fire of its buffered slot, if
// it holds one and its last run has ended; a fire that passes over the
// slots later than the catch-up window; the fire of its next slot, once
// due, as its overlap policy says; or nil, with when to look again.
func (h *Host) decide(ctx context.Context, sc store.Schedule, sl slots, now time.Time) (*store.ScheduleFire, time.Time, error) {
	f := &store.ScheduleFire{Name: sc.Name, Slot: sc.NextSlot, Buffered: sc.Buffered, NextSlot: sc.NextSlot, NextBuffered: sc.Buffered, Now: now}
	// The last run's status is read only when a slot waits for it or is
	// due: a pass over schedules with nothing due reads no instance.
	if !sc.Buffered.IsZero() {
		running, err := h.running(ctx, sc.LastInstance)
		if err != nil {
			return nil, time.Time{}, err
		}
		if !running {
			f.NextBuffered = time.Time{}
			return f, time.Time{}, h.start(ctx, sc, f, sc.Buffered, false)
		}
	}
	if sc.NextSlot.IsZero() {
		return nil, time.Time{}, nil // a cron expression that names no more times
	}
	if now.Sub(sc.NextSlot) > sc.CatchupWindow {
		for !f.NextSlot.IsZero() && now.Sub(f.NextSlot) > sc.CatchupWindow {
			f.NextSlot, f.Missed = sl.next(f.NextSlot), f.Missed+1
		}
		return f, time.Time{}, nil
	}
	due := sc.NextSlot.Add(jitter(sc.Name, sc.NextSlot, sc.Jitter))
	if now.Before(due) {
		if !sc.Buffered.IsZero() {
			// Look again soon: the buffered slot waits for the last run.
			return nil, now.Add(h.opts.SchedulePoll), nil
		}
		return nil, due, nil
	}
	running, err := h.running(ctx, sc.LastInstance)
	if err != nil {
		return nil, time.Time{}, err
	}
	slot := sc.NextSlot
	f.NextSlot = sl.next(slot)
	f.Run = &store.ScheduleRun{Schedule: sc.Name, Slot: slot, FiredAt: now}
	switch {
	case !running || sc.Overlap == store.OverlapAllowAll:
		return f, time.Time{}, h.start(ctx, sc, f, slot, false)
	case sc.Buffered.IsZero() && (sc.Overlap == store.OverlapBufferOne || sc.Overlap == store.OverlapCancelOther):
		f.Run.Outcome, f.NextBuffered = store.RunBuffered, slot // fired cancels the run of cancel-other
	default: // skip, a slot held back already, or a policy a hand-edited row made up
		f.Run.Outcome = store.RunSkipped
	}
	return f, time.Time{}, nil
}

// start makes f start the run of slot of sc (a manual one, triggered by
// hand, with manual): its instance, with the last run that finished, or,
// when the run cannot start (its orchestration has no module, say), a
// run that failed, saying why.
func (h *Host) start(ctx context.Context, sc store.Schedule, f *store.ScheduleFire, slot time.Time, manual bool) error {
	f.Run = &store.ScheduleRun{Schedule: sc.Name, Slot: slot, FiredAt: f.Now, Outcome: store.RunStarted, Manual: manual}
	id := runID(sc.Name, slot)
	if manual {
		id = sc.Name + ":manual:" + slot.UTC().Format(time.RFC3339Nano)
	}
	n, err := h.newInstance(ctx, sc.Module, sc.Orchestration, sc.Input, id)
	if err != nil {
		f.Run.Outcome, f.Run.Error = store.RunFailed, err.Error()
		return nil
	}
	n.Now = f.Now
	last, err := h.lastRun(ctx, sc.Name)
	if err != nil {
		return err
	}
	n.LastRun, f.Start = last, &n
	return nil
}

// running reports whether the instance id (a schedule's last run) has not
// finished; one that does not exist (purged) has.
func (h *Host) running(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	in, err := h.st.GetInstance(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && !in.Status.IsTerminal(), err
}

// lastRun returns the end of the newest run of the schedule that has
// finished: its result, or its failure (failed, canceled, terminated); nil
// when none has.
func (h *Host) lastRun(ctx context.Context, name string) (*store.LastRun, error) {
	runs, err := h.st.ScheduleRuns(ctx, name, store.MaxScheduleRuns)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.Outcome != store.RunStarted {
			continue
		}
		in, err := h.st.GetInstance(ctx, r.InstanceID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case in.Status.IsTerminal():
			return &store.LastRun{Result: in.Result, Failure: in.Failure}, nil
		}
	}
	return nil, nil
}

// cancelRun requests the cancellation of sc's last run, for a slot that
// came while it ran and is now held back until it ends
// (store.OverlapCancelOther), once. A run that has finished meanwhile
// needs none. (A host that stops between the two leaves the slot held
// back until the run ends of itself.)
func (h *Host) cancelRun(ctx context.Context, sc store.Schedule) {
	err := h.Cancel(ctx, sc.LastInstance, "schedule "+sc.Name+": a new slot came while this run ran (overlap policy cancel-other)")
	if err != nil && !errors.Is(err, api.ErrFinished) {
		h.opts.Logger.Warn("cannot cancel a schedule's last run", "schedule", sc.Name, "instance", sc.LastInstance, "err", err)
	}
}

// fired counts and logs what a fire did.
func (h *Host) fired(sc store.Schedule, f store.ScheduleFire, run store.ScheduleRun) {
	if f.Missed > 0 {
		h.metrics.ScheduleFires(sc.Name, "missed", f.Missed)
		h.opts.Logger.Warn("schedule missed slots: they came later than its catch-up window", "schedule", sc.Name,
			"missed", f.Missed, "catchup_window", sc.CatchupWindow, "next", f.NextSlot)
	}
	if f.Run == nil {
		return
	}
	outcome := string(run.Outcome)
	if run.Manual && run.Outcome == store.RunStarted {
		outcome = "triggered"
	}
	h.metrics.ScheduleFires(sc.Name, outcome, 1)
	switch run.Outcome {
	case store.RunStarted:
		h.started(sc.Orchestration)
		h.opts.Logger.Info("schedule started a run", "schedule", sc.Name, "slot", run.Slot, "instance", run.InstanceID)
	case store.RunFailed:
		h.opts.Logger.Error("schedule could not start a run", "schedule", sc.Name, "slot", run.Slot, "err", run.Error)
	default:
		h.opts.Logger.Info("schedule passed over a slot", "schedule", sc.Name, "slot", run.Slot, "outcome", run.Outcome, "last_run", sc.LastInstance)
	}
}
