package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// DefaultCatchupWindow is how late a slot may start after downtime when a
// schedule does not say.
const DefaultCatchupWindow = time.Hour

// CreateSchedule creates the schedule req describes, which fires from its
// first slot after now. A request that cannot be taken as it is (a cron
// expression that does not parse, a time zone the host does not know, an
// orchestration no module registers) is refused with ErrBadInput, or
// ErrUnknownOrchestration, saying what was wrong; a name taken with
// ErrScheduleExists.
func (h *Host) CreateSchedule(ctx context.Context, req api.ScheduleRequest) (api.Schedule, error) {
	sc, err := h.newSchedule(ctx, req)
	if err != nil {
		return api.Schedule{}, err
	}
	if err := h.st.CreateSchedule(ctx, sc); errors.Is(err, store.ErrScheduleExists) {
		return api.Schedule{}, fmt.Errorf("%w: %s; delete it first to replace it", api.ErrScheduleExists, abi.Quote(sc.Name))
	} else if err != nil {
		return api.Schedule{}, fmt.Errorf("host: create schedule %s: %w", abi.Quote(sc.Name), err)
	}
	h.opts.Logger.Info("schedule created", "schedule", sc.Name, "orchestration", sc.Orchestration, "next", sc.NextSlot)
	h.scheduleWork.Notify()
	return scheduleOf(sc, nil), nil
}

// newSchedule checks req and returns the schedule it creates.
func (h *Host) newSchedule(ctx context.Context, req api.ScheduleRequest) (store.Schedule, error) {
	bad := func(err error) (store.Schedule, error) {
		return store.Schedule{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if err := checkScheduleName(req.Name); err != nil {
		return store.Schedule{}, err
	}
	every, err := parseDuration("interval", req.Every)
	if err != nil {
		return store.Schedule{}, err
	}
	sl, err := newSlots(req.Cron, every, req.Timezone)
	if err != nil {
		return bad(err)
	}
	window, err := parseDuration("catch-up window", req.CatchupWindow)
	if err != nil {
		return store.Schedule{}, err
	}
	if window == 0 {
		window = DefaultCatchupWindow
	}
	jit, err := parseDuration("jitter", req.Jitter)
	if err != nil {
		return store.Schedule{}, err
	}
	overlap := store.Overlap(req.Overlap)
	if overlap == "" {
		overlap = store.OverlapSkip
	}
	if !slices.Contains(store.Overlaps(), overlap) {
		return bad(fmt.Errorf("the overlap policy %s is not one of %v", abi.Quote(req.Overlap), store.Overlaps()))
	}
	if err := abi.CheckReason("note", req.Note); err != nil {
		return bad(err)
	}
	// The runs' start is checked now, with an id as long as any run's.
	n, err := h.newInstance(ctx, req.Module, req.Orchestration, req.Input, runID(req.Name, time.Date(2000, 1, 1, 0, 0, 0, 1, time.UTC)))
	if err != nil {
		return store.Schedule{}, err
	}
	now := h.opts.Clock()
	next := sl.next(now)
	if next.IsZero() {
		return bad(fmt.Errorf("the cron expression %s names no time in the next five years (a day no month has?)", abi.Quote(req.Cron)))
	}
	module := ""
	if req.Module != "" {
		module = n.ModuleHash
	}
	return store.Schedule{Name: req.Name, Cron: req.Cron, Every: every, Timezone: req.Timezone, Jitter: jit,
		Orchestration: req.Orchestration, Module: module, Input: n.Input, Overlap: overlap, CatchupWindow: window,
		Paused: req.Paused, Note: req.Note, NextSlot: next, CreatedAt: now, UpdatedAt: now}, nil
}

// Schedules returns every schedule, by name, without their runs.
func (h *Host) Schedules(ctx context.Context) ([]api.Schedule, error) {
	all, err := h.st.ListSchedules(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: list schedules: %w", err)
	}
	out := make([]api.Schedule, len(all))
	for i, sc := range all {
		out[i] = scheduleOf(sc, nil)
	}
	return out, nil
}

// scheduleRuns is how many runs Schedule returns.
const scheduleRuns = 20

// Schedule returns a schedule with its last runs, or ErrScheduleNotFound.
func (h *Host) Schedule(ctx context.Context, name string) (api.Schedule, error) {
	sc, err := h.schedule(ctx, name)
	if err != nil {
		return api.Schedule{}, err
	}
	runs, err := h.st.ScheduleRuns(ctx, name, scheduleRuns)
	if err != nil {
		return api.Schedule{}, fmt.Errorf("host: runs of schedule %s: %w", abi.Quote(name), err)
	}
	return scheduleOf(sc, runs), nil
}

// schedule reads a schedule, or returns ErrScheduleNotFound.
func (h *Host) schedule(ctx context.Context, name string) (store.Schedule, error) {
	sc, err := h.st.GetSchedule(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return sc, fmt.Errorf("%w: %s", api.ErrScheduleNotFound, abi.Quote(name))
	}
	if err != nil {
		return sc, fmt.Errorf("host: schedule %s: %w", abi.Quote(name), err)
	}
	return sc, nil
}

// PauseSchedule pauses a schedule, for note: its slots do not fire until
// it is resumed (a manual trigger still starts a run).
func (h *Host) PauseSchedule(ctx context.Context, name, note string) error {
	if err := abi.CheckReason("note", note); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	return h.pause(ctx, name, true, note, time.Time{})
}

// ResumeSchedule resumes a paused schedule from its first slot after now:
// the slots that came while it was paused do not fire.
func (h *Host) ResumeSchedule(ctx context.Context, name string) error {
	sc, err := h.schedule(ctx, name)
	if err != nil {
		return err
	}
	sl, err := slotsOf(sc)
	if err != nil {
		return fmt.Errorf("host: schedule %s does not read (%w); delete it and create it again", abi.Quote(name), err)
	}
	return h.pause(ctx, name, false, "", sl.next(h.opts.Clock()))
}

func (h *Host) pause(ctx context.Context, name string, paused bool, note string, next time.Time) error {
	err := h.st.PauseSchedule(ctx, name, paused, note, next, h.opts.Clock())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", api.ErrScheduleNotFound, abi.Quote(name))
	}
	if err != nil {
		return fmt.Errorf("host: pause schedule %s: %w", abi.Quote(name), err)
	}
	h.opts.Logger.Info("schedule paused or resumed", "schedule", name, "paused", paused, "note", note)
	h.scheduleWork.Notify()
	return nil
}

// TriggerSchedule starts a run of the schedule now, whatever its slots,
// its overlap policy and its pause say, and returns it: a run whose
// orchestration cannot start is returned failed, saying why.
func (h *Host) TriggerSchedule(ctx context.Context, name string) (api.ScheduleRun, error) {
	sc, err := h.schedule(ctx, name)
	if err != nil {
		return api.ScheduleRun{}, err
	}
	now := h.opts.Clock()
	f := store.ScheduleFire{Name: name, Manual: true, Now: now}
	if err := h.start(ctx, sc, &f, now, true); err != nil {
		return api.ScheduleRun{}, fmt.Errorf("host: trigger schedule %s: %w", abi.Quote(name), err)
	}
	run, err := h.st.FireSchedule(ctx, f)
	if errors.Is(err, store.ErrNotFound) {
		return api.ScheduleRun{}, fmt.Errorf("%w: %s", api.ErrScheduleNotFound, abi.Quote(name))
	}
	if err != nil {
		return api.ScheduleRun{}, fmt.Errorf("host: trigger schedule %s: %w", abi.Quote(name), err)
	}
	h.fired(sc, f, run)
	return runOf(run), nil
}

// DeleteSchedule deletes a schedule and the record of its runs; the runs'
// instances stay.
func (h *Host) DeleteSchedule(ctx context.Context, name string) error {
	err := h.st.DeleteSchedule(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", api.ErrScheduleNotFound, abi.Quote(name))
	}
	if err != nil {
		return fmt.Errorf("host: delete schedule %s: %w", abi.Quote(name), err)
	}
	h.opts.Logger.Info("schedule deleted", "schedule", name)
	return nil
}

// nextRuns is how many of its next runs a schedule shows.
const nextRuns = 5

// scheduleOf is a schedule on the wire, with runs.
func scheduleOf(sc store.Schedule, runs []store.ScheduleRun) api.Schedule {
	out := api.Schedule{Name: sc.Name, Cron: sc.Cron, Timezone: sc.Timezone, Orchestration: sc.Orchestration, Module: sc.Module,
		Input: json.RawMessage(sc.Input), Overlap: string(sc.Overlap), CatchupWindow: sc.CatchupWindow.String(), Paused: sc.Paused,
		Note: sc.Note, NextRuns: []time.Time{}, LastInstance: sc.LastInstance, Started: sc.Started, Skipped: sc.Skipped, Missed: sc.Missed,
		CreatedAt: sc.CreatedAt}
	if sc.Every != 0 {
		out.Every = sc.Every.String()
	}
	if sc.Jitter != 0 {
		out.Jitter = sc.Jitter.String()
	}
	if !sc.Buffered.IsZero() {
		b := sc.Buffered
		out.Buffered = &b
	}
	if sl, err := slotsOf(sc); err == nil && !sc.Paused {
		for slot := sc.NextSlot; !slot.IsZero() && len(out.NextRuns) < nextRuns; slot = sl.next(slot) {
			out.NextRuns = append(out.NextRuns, slot.Add(jitter(sc.Name, slot, sc.Jitter)))
		}
	}
	for _, r := range runs {
		out.Runs = append(out.Runs, runOf(r))
	}
	return out
}

// runOf is a run on the wire.
func runOf(r store.ScheduleRun) api.ScheduleRun {
	return api.ScheduleRun{Slot: r.Slot, FiredAt: r.FiredAt, Outcome: string(r.Outcome), InstanceID: r.InstanceID, Manual: r.Manual, Error: r.Error}
}
