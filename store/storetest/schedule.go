package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// newSchedule is a schedule "nightly" whose next slot is at.
func newSchedule(at time.Time) store.Schedule {
	return store.Schedule{Name: "nightly", Cron: "0 3 * * *", Timezone: "Europe/Paris", Jitter: time.Second, Orchestration: orchestration,
		Module: module, Input: json.RawMessage(`"in"`), Overlap: store.OverlapBufferOne, CatchupWindow: time.Hour, Note: "n",
		NextSlot: at, CreatedAt: t0, UpdatedAt: t0}
}

// fireStart is the decision to start the run of slot, moving on to next.
func fireStart(sc store.Schedule, slot, next time.Time, last *store.LastRun) store.ScheduleFire {
	id := sc.Name + ":" + strconv.FormatInt(slot.Unix(), 10)
	return store.ScheduleFire{Name: sc.Name, Slot: sc.NextSlot, Buffered: sc.Buffered, NextSlot: next,
		Run:   &store.ScheduleRun{Schedule: sc.Name, Slot: slot, FiredAt: slot, Outcome: store.RunStarted},
		Start: &store.NewInstance{ID: id, Name: orchestration, ModuleHash: module, Input: sc.Input, Now: slot, LastRun: last}, Now: slot}
}

// testSchedules: a schedule is stored as given and listed by name; a
// fire starts its run's instance (with the last run in its start message),
// records the run and moves the schedule on, once: a fire made from a
// slot the schedule has left, or while it is paused, changes nothing; a
// run whose instance id is taken is recorded as such; the last
// store.MaxScheduleRuns runs are kept; delete removes it and its runs.
func testSchedules(f *fixture) {
	slot := t0.Add(time.Hour)
	sc := newSchedule(slot)
	f.must(f.s.CreateSchedule(f.ctx, sc), "CreateSchedule")
	f.wantErr(f.s.CreateSchedule(f.ctx, sc), store.ErrScheduleExists, "CreateSchedule again")
	other := newSchedule(slot)
	other.Name, other.Cron, other.Every, other.Timezone = "every", "", 10*time.Minute, ""
	f.must(f.s.CreateSchedule(f.ctx, other), "CreateSchedule every")
	_, err := f.s.GetSchedule(f.ctx, "absent")
	f.wantErr(err, store.ErrNotFound, "GetSchedule of no schedule")
	got, err := f.s.GetSchedule(f.ctx, "nightly")
	f.must(err, "GetSchedule")
	if !reflect.DeepEqual(got, sc) {
		f.t.Fatalf("GetSchedule: %+v; want %+v", got, sc)
	}
	list, err := f.s.ListSchedules(f.ctx)
	f.must(err, "ListSchedules")
	if len(list) != 2 || list[0].Name != "every" || list[1].Name != "nightly" || list[0].Every != 10*time.Minute {
		f.t.Fatalf("ListSchedules: %+v; want every, then nightly", list)
	}

	next := slot.Add(24 * time.Hour)
	last := &store.LastRun{Failure: &engine.Failure{Message: "boom"}}
	fire := fireStart(sc, slot, next, last)
	run, err := f.s.FireSchedule(f.ctx, fire)
	f.must(err, "FireSchedule")
	if run.Outcome != store.RunStarted || run.InstanceID != fire.Start.ID {
		f.t.Fatalf("FireSchedule: %+v; want run %s started", run, fire.Start.ID)
	}
	_, err = f.s.FireSchedule(f.ctx, fire)
	f.wantErr(err, store.ErrChanged, "FireSchedule of a slot fired already")
	item := f.lockID(slot, fire.Start.ID)
	start := engine.ScheduledStart(fire.Start.ID, orchestration, sc.Input, nil, last.Failure)
	f.messages(item, start)
	got, err = f.s.GetSchedule(f.ctx, "nightly")
	f.must(err, "GetSchedule")
	if !got.NextSlot.Equal(next) || got.Started != 1 || got.LastInstance != fire.Start.ID {
		f.t.Fatalf("after a fire: %+v; want next slot %v, 1 started, last %s", got, next, fire.Start.ID)
	}

	// A slot held back, then a skip with missed slots: the counts add up.
	held := store.ScheduleFire{Name: "nightly", Slot: next, NextSlot: next.Add(24 * time.Hour), NextBuffered: next,
		Run: &store.ScheduleRun{Slot: next, FiredAt: next, Outcome: store.RunBuffered}, Now: next}
	_, err = f.s.FireSchedule(f.ctx, held)
	f.must(err, "FireSchedule buffered")
	skip := store.ScheduleFire{Name: "nightly", Slot: held.NextSlot, Buffered: next, NextSlot: held.NextSlot.Add(72 * time.Hour), NextBuffered: next, Missed: 2,
		Run: &store.ScheduleRun{Slot: held.NextSlot, FiredAt: held.NextSlot, Outcome: store.RunSkipped}, Now: held.NextSlot}
	_, err = f.s.FireSchedule(f.ctx, store.ScheduleFire{Name: "nightly", Slot: held.NextSlot, NextSlot: slot, Now: slot})
	f.wantErr(err, store.ErrChanged, "FireSchedule that read no buffered slot")
	_, err = f.s.FireSchedule(f.ctx, skip)
	f.must(err, "FireSchedule skipped")
	got, err = f.s.GetSchedule(f.ctx, "nightly")
	f.must(err, "GetSchedule")
	if got.Skipped != 1 || got.Missed != 2 || !got.Buffered.Equal(next) || !got.NextSlot.Equal(skip.NextSlot) {
		f.t.Fatalf("after a skip: %+v; want 1 skipped, 2 missed, %v held back", got, next)
	}

	// Paused, a slot does not fire, but a manual run does; resumed, it
	// goes on from the slot given, holding none back.
	f.must(f.s.PauseSchedule(f.ctx, "nightly", true, "maintenance", time.Time{}, next), "PauseSchedule")
	_, err = f.s.FireSchedule(f.ctx, fireStart(got, got.NextSlot, got.NextSlot.Add(time.Hour), nil))
	f.wantErr(err, store.ErrChanged, "FireSchedule while paused")
	manual := fireStart(got, next.Add(time.Minute), time.Time{}, nil)
	manual.Manual, manual.Run.Manual = true, true
	_, err = f.s.FireSchedule(f.ctx, manual)
	f.must(err, "FireSchedule manual")
	got, err = f.s.GetSchedule(f.ctx, "nightly")
	f.must(err, "GetSchedule")
	if !got.Paused || got.Note != "maintenance" || got.Started != 2 || !got.NextSlot.Equal(skip.NextSlot) {
		f.t.Fatalf("paused, after a manual run: %+v; want it paused, 2 started, its slot unmoved", got)
	}
	resume := t0.Add(100 * time.Hour)
	f.must(f.s.PauseSchedule(f.ctx, "nightly", false, "", resume, next), "PauseSchedule resume")
	got, err = f.s.GetSchedule(f.ctx, "nightly")
	f.must(err, "GetSchedule")
	if got.Paused || !got.NextSlot.Equal(resume) || !got.Buffered.IsZero() {
		f.t.Fatalf("resumed: %+v; want next slot %v, none held back", got, resume)
	}
	f.wantErr(f.s.PauseSchedule(f.ctx, "absent", true, "", time.Time{}, next), store.ErrNotFound, "PauseSchedule of no schedule")

	// An instance id taken already: the run is recorded as existing, and
	// nothing is created.
	again := fireStart(got, slot, resume.Add(time.Hour), nil)
	run, err = f.s.FireSchedule(f.ctx, again)
	f.must(err, "FireSchedule of a taken id")
	if run.Outcome != store.RunExisted {
		f.t.Fatalf("FireSchedule of a taken id: %+v; want it %s", run, store.RunExisted)
	}
	runs, err := f.s.ScheduleRuns(f.ctx, "nightly", 10)
	f.must(err, "ScheduleRuns")
	var outcomes []store.RunOutcome
	for _, r := range runs {
		outcomes = append(outcomes, r.Outcome)
	}
	want := []store.RunOutcome{store.RunExisted, store.RunStarted, store.RunSkipped, store.RunBuffered, store.RunStarted}
	if !reflect.DeepEqual(outcomes, want) || !runs[1].Manual || runs[4].InstanceID != fire.Start.ID || !runs[4].Slot.Equal(slot) {
		f.t.Fatalf("ScheduleRuns: %+v; want %v, newest first", runs, want)
	}

	// A run whose module is not there fails, and the schedule moves on.
	gone := newSchedule(slot)
	gone.Name = "gone"
	f.must(f.s.CreateSchedule(f.ctx, gone), "CreateSchedule gone")
	lost := fireStart(gone, slot, next, nil)
	lost.Start.ModuleHash = "0ff"
	run, err = f.s.FireSchedule(f.ctx, lost)
	f.must(err, "FireSchedule of a module not deployed")
	if run.Outcome != store.RunFailed || run.InstanceID != "" || !strings.Contains(run.Error, "0ff") {
		f.t.Fatalf("FireSchedule of a module not deployed: %+v; want it failed, naming the module", run)
	}
	got, err = f.s.GetSchedule(f.ctx, "gone")
	f.must(err, "GetSchedule gone")
	if got.Started != 0 || !got.NextSlot.Equal(next) {
		f.t.Fatalf("after a run that failed: %+v; want none started, the next slot %v", got, next)
	}
	_, err = f.s.GetInstance(f.ctx, lost.Start.ID)
	f.wantErr(err, store.ErrNotFound, "GetInstance of a run that failed")

	// Only the last MaxScheduleRuns are kept.
	sk := newSchedule(slot)
	sk.Name = "many"
	f.must(f.s.CreateSchedule(f.ctx, sk), "CreateSchedule many")
	for i := range store.MaxScheduleRuns + 5 {
		at := slot.Add(time.Duration(i) * time.Minute)
		_, err := f.s.FireSchedule(f.ctx, store.ScheduleFire{Name: "many", Slot: at, NextSlot: at.Add(time.Minute),
			Run: &store.ScheduleRun{Slot: at, FiredAt: at, Outcome: store.RunSkipped}, Now: at})
		f.must(err, "FireSchedule many")
	}
	runs, err = f.s.ScheduleRuns(f.ctx, "many", 2*store.MaxScheduleRuns)
	f.must(err, "ScheduleRuns many")
	if len(runs) != store.MaxScheduleRuns || !runs[len(runs)-1].Slot.Equal(slot.Add(5*time.Minute)) {
		f.t.Fatalf("ScheduleRuns: %d runs, the oldest at %v; want %d, the oldest the 6th", len(runs), runs[len(runs)-1].Slot, store.MaxScheduleRuns)
	}

	f.must(f.s.DeleteSchedule(f.ctx, "nightly"), "DeleteSchedule")
	f.wantErr(f.s.DeleteSchedule(f.ctx, "nightly"), store.ErrNotFound, "DeleteSchedule again")
	runs, err = f.s.ScheduleRuns(f.ctx, "nightly", 10)
	f.must(err, "ScheduleRuns of a deleted schedule")
	if len(runs) != 0 {
		f.t.Fatalf("ScheduleRuns of a deleted schedule: %+v; want none", runs)
	}
	f.instance(fire.Start.ID) // its runs' instances stay
}

// testScheduleFiredOnce: two stores firing one slot at once fire it once.
func testScheduleFiredOnce(f *fixture, other store.Store) {
	slot := t0.Add(time.Hour)
	sc := newSchedule(slot)
	f.must(f.s.CreateSchedule(f.ctx, sc), "CreateSchedule")
	fire := fireStart(sc, slot, slot.Add(24*time.Hour), nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		s := f.s
		if i%2 == 1 {
			s = other
		}
		wg.Go(func() { _, errs[i] = s.FireSchedule(f.ctx, fire) })
	}
	wg.Wait()
	fired := 0
	for _, err := range errs {
		switch {
		case err == nil:
			fired++
		case !errors.Is(err, store.ErrChanged):
			f.t.Fatalf("FireSchedule: %v; want it fired or refused as changed", err)
		}
	}
	got, err := f.s.GetSchedule(f.ctx, "nightly")
	f.must(err, "GetSchedule")
	if fired != 1 || got.Started != 1 {
		f.t.Fatalf("8 fires of one slot at once on two stores: %d fired, %d started; want 1", fired, got.Started)
	}
}
