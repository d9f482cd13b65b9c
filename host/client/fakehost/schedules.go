package fakehost

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/host/api"
)

// The fake's schedules fire no slot: they are kept as created, with no
// next runs, and change only when paused, resumed, triggered (which
// starts an instance at once, as StartOn does) or deleted. A request
// without a name, or with neither or both of a cron expression and an
// interval, is ErrBadInput; the host's tests check the rest.

// CreateSchedule keeps the schedule req describes.
func (h *Host) CreateSchedule(ctx context.Context, req api.ScheduleRequest) (api.Schedule, error) {
	if err := h.failure("CreateSchedule"); err != nil {
		return api.Schedule{}, err
	}
	if req.Name == "" || (req.Cron == "") == (req.Every == "") {
		return api.Schedule{}, fmt.Errorf("%w: a schedule needs a name, and a cron expression or an interval", api.ErrBadInput)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.orchestrations[req.Orchestration] == nil {
		return api.Schedule{}, fmt.Errorf("%w %q: no deployed module registers it", api.ErrUnknownOrchestration, req.Orchestration)
	}
	if _, ok := h.schedule(req.Name); ok {
		return api.Schedule{}, fmt.Errorf("%w: %q; delete it first to replace it", api.ErrScheduleExists, req.Name)
	}
	overlap := req.Overlap
	if overlap == "" {
		overlap = "skip"
	}
	sc := api.Schedule{Name: req.Name, Cron: req.Cron, Every: req.Every, Timezone: req.Timezone, Orchestration: req.Orchestration,
		Module: req.Module, Input: req.Input, Overlap: overlap, CatchupWindow: req.CatchupWindow, Jitter: req.Jitter,
		Paused: req.Paused, Note: req.Note, NextRuns: []time.Time{}, CreatedAt: h.tick()}
	h.schedules = append(h.schedules, sc)
	slices.SortFunc(h.schedules, func(a, b api.Schedule) int { return strings.Compare(a.Name, b.Name) })
	return sc, nil
}

// schedule returns the index of the schedule name. h.mu must be held.
func (h *Host) schedule(name string) (int, bool) {
	i := slices.IndexFunc(h.schedules, func(sc api.Schedule) bool { return sc.Name == name })
	return i, i >= 0
}

// Schedules returns every schedule, by name, without their runs.
func (h *Host) Schedules(ctx context.Context) ([]api.Schedule, error) {
	if err := h.failure("Schedules"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.schedules)
	for i := range out {
		out[i].Runs = nil
	}
	return out, nil
}

// Schedule returns a schedule with its runs, newest first.
func (h *Host) Schedule(ctx context.Context, name string) (api.Schedule, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.schedule(name)
	if !ok {
		return api.Schedule{}, fmt.Errorf("%w: %q", api.ErrScheduleNotFound, name)
	}
	return h.schedules[i], nil
}

// PauseSchedule pauses a schedule, for note.
func (h *Host) PauseSchedule(ctx context.Context, name, note string) error {
	return h.changeSchedule(name, func(sc *api.Schedule) { sc.Paused, sc.Note = true, note })
}

// ResumeSchedule resumes a schedule.
func (h *Host) ResumeSchedule(ctx context.Context, name string) error {
	return h.changeSchedule(name, func(sc *api.Schedule) { sc.Paused, sc.Note = false, "" })
}

func (h *Host) changeSchedule(name string, change func(sc *api.Schedule)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.schedule(name)
	if !ok {
		return fmt.Errorf("%w: %q", api.ErrScheduleNotFound, name)
	}
	change(&h.schedules[i])
	return nil
}

// TriggerSchedule starts a run of the schedule now.
func (h *Host) TriggerSchedule(ctx context.Context, name string) (api.ScheduleRun, error) {
	sc, err := h.Schedule(ctx, name)
	if err != nil {
		return api.ScheduleRun{}, err
	}
	h.mu.Lock()
	at := h.tick()
	h.mu.Unlock()
	id, err := h.StartOn(ctx, sc.Module, sc.Orchestration, sc.Input, sc.Name+":manual:"+at.Format(time.RFC3339Nano))
	if err != nil {
		return api.ScheduleRun{}, err
	}
	run := api.ScheduleRun{Slot: at, FiredAt: at, Outcome: "started", InstanceID: id, Manual: true}
	return run, h.changeSchedule(name, func(sc *api.Schedule) {
		sc.Runs = slices.Insert(sc.Runs, 0, run)
		sc.Started++
		sc.LastInstance = id
	})
}

// DeleteSchedule deletes a schedule.
func (h *Host) DeleteSchedule(ctx context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.schedule(name)
	if !ok {
		return fmt.Errorf("%w: %q", api.ErrScheduleNotFound, name)
	}
	h.schedules = slices.Delete(h.schedules, i, i+1)
	return nil
}
