package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrScheduleExists is returned by CreateSchedule when the name is taken.
var ErrScheduleExists = errors.New("schedule already exists")

// Overlap is what a schedule does with a slot that comes while its last
// run still runs.
type Overlap string

// The overlap policies.
const (
	// OverlapSkip passes over the slot (the default).
	OverlapSkip Overlap = "skip"
	// OverlapBufferOne holds one slot back and starts it when the running
	// run ends; a slot that comes while one is held back is passed over.
	OverlapBufferOne Overlap = "buffer-one"
	// OverlapAllowAll starts every slot, whatever runs.
	OverlapAllowAll Overlap = "allow-all"
	// OverlapCancelOther requests the cancellation of the running run and
	// holds the slot back, as OverlapBufferOne does, until it has ended.
	OverlapCancelOther Overlap = "cancel-other"
)

// Overlaps lists the overlap policies.
func Overlaps() []Overlap {
	return []Overlap{OverlapSkip, OverlapBufferOne, OverlapAllowAll, OverlapCancelOther}
}

// Schedule starts an orchestration at each of its slots: the times its
// Cron expression or its Every interval names. The store keeps it; the
// host computes its slots.
type Schedule struct {
	// Name identifies the schedule; its runs' instance ids begin with it.
	Name string
	// Cron is a cron expression, read in Timezone (empty: UTC); Every,
	// when Cron is empty, an interval whose slots are its multiples since
	// the Unix epoch.
	Cron     string
	Every    time.Duration
	Timezone string
	// Jitter delays each slot's start by up to it, by a delay that is a
	// function of the schedule's name and the slot: every host agrees.
	Jitter time.Duration
	// Orchestration is what each run starts, on Module (a hash; empty: the
	// newest module that registers it when the run starts), with Input.
	Orchestration string
	Module        string
	Input         json.RawMessage
	Overlap       Overlap
	// CatchupWindow is how late a slot may start: after downtime, a slot
	// older than it is passed over and counted as Missed.
	CatchupWindow time.Duration
	Paused        bool
	// Note says why the schedule was paused, or is what its creator said
	// of it.
	Note string
	// NextSlot is the schedule's next slot (before jitter).
	NextSlot time.Time
	// Buffered is the slot held back until the last run ends (OverlapBufferOne,
	// OverlapCancelOther); zero for none.
	Buffered time.Time
	// LastInstance is the instance of the last run started, if any.
	LastInstance string
	// Started, Skipped and Missed count the runs started, and the slots
	// passed over because a run was running or came too late.
	Started, Skipped, Missed int64
	CreatedAt, UpdatedAt     time.Time
}

// RunOutcome is what became of one slot of a schedule.
type RunOutcome string

// The outcomes of a slot.
const (
	// RunStarted: its run started.
	RunStarted RunOutcome = "started"
	// RunSkipped: passed over, as its last run was running.
	RunSkipped RunOutcome = "skipped"
	// RunBuffered: held back until its last run ends.
	RunBuffered RunOutcome = "buffered"
	// RunExisted: the run's instance id was taken already: the slot had
	// fired.
	RunExisted RunOutcome = "existed"
	// RunFailed: its run could not start (ScheduleRun.Error says why).
	RunFailed RunOutcome = "failed"
)

// ScheduleRun is one slot of a schedule and what became of it.
type ScheduleRun struct {
	Schedule string
	// Slot is the slot's time (or, for a run triggered by hand, when it
	// was triggered), FiredAt when it was decided.
	Slot, FiredAt time.Time
	Outcome       RunOutcome
	// InstanceID is the run's instance (RunStarted, RunExisted).
	InstanceID string
	// Manual marks a run triggered by hand.
	Manual bool
	// Error says why the run could not start (RunFailed).
	Error string
}

// ScheduleFire is one decision of a scheduler about one schedule, made
// from the schedule as it read it: it happens only if the schedule is
// still so (FireSchedule).
type ScheduleFire struct {
	Name string
	// Slot and Buffered are the schedule's NextSlot and Buffered as the
	// caller read them, unless Manual (a run triggered by hand, which
	// needs only the schedule to exist).
	Slot, Buffered time.Time
	Manual         bool
	// NextSlot and NextBuffered replace them (not when Manual).
	NextSlot, NextBuffered time.Time
	// Missed counts the slots passed over because they came too late.
	Missed int64
	// Run is the slot decided on, if one was: with Outcome RunStarted,
	// Start is the instance its run creates.
	Run   *ScheduleRun
	Start *NewInstance
	// Now is when the decision was made.
	Now time.Time
}

// Schedules keeps the schedules and the runs they started. The host's
// scheduler reads them (ListSchedules, ScheduleRuns) and fires their slots
// (FireSchedule); the API changes them.
type Schedules interface {
	// CreateSchedule stores a new schedule, or returns ErrScheduleExists.
	CreateSchedule(ctx context.Context, s Schedule) error
	// GetSchedule returns a schedule, or ErrNotFound.
	GetSchedule(ctx context.Context, name string) (Schedule, error)
	// ListSchedules returns every schedule, by name.
	ListSchedules(ctx context.Context) ([]Schedule, error)
	// PauseSchedule pauses (paused) or resumes a schedule with note; a
	// resumed one goes on from next, its next slot, and holds no slot
	// back. It returns ErrNotFound.
	PauseSchedule(ctx context.Context, name string, paused bool, note string, next, now time.Time) error
	// DeleteSchedule deletes a schedule and the record of its runs (their
	// instances stay), or returns ErrNotFound.
	DeleteSchedule(ctx context.Context, name string) error
	// FireSchedule carries out f in one transaction: it checks that the
	// schedule is as f read it (not paused, unless Manual), creates the
	// run's instance (an id taken already makes the run RunExisted, and a
	// module that is no longer there RunFailed: both create nothing),
	// records the run, and moves the schedule on: its
	// slot, its buffered slot, its counts and last instance. It returns
	// ErrChanged when the schedule is not as f read it (another host fired
	// the slot, or it was paused or changed), ErrNotFound when it does not
	// exist; then nothing changed. It keeps the last MaxScheduleRuns runs
	// of each schedule.
	FireSchedule(ctx context.Context, f ScheduleFire) (ScheduleRun, error)
	// ScheduleRuns returns up to max of a schedule's runs, newest first.
	ScheduleRuns(ctx context.Context, name string, max int) ([]ScheduleRun, error)
}

// MaxScheduleRuns is how many runs of each schedule a store keeps.
const MaxScheduleRuns = 100
