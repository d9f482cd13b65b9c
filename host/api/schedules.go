package api

import (
	"encoding/json"
	"errors"
	"time"
)

// The bodies of schedules: POST /v1/schedules, GET /v1/schedules and
// /v1/schedules/{name}, POST /v1/schedules/{name}/trigger.

// ErrScheduleNotFound is returned when no schedule has the name a request
// gives.
var ErrScheduleNotFound = errors.New("host: schedule not found")

// ErrScheduleExists is returned by CreateSchedule when the name is taken.
var ErrScheduleExists = errors.New("host: schedule already exists")

// ScheduleRequest creates a schedule (POST /v1/schedules). Durations are
// texts such as "90s", "10m" or "1h30m".
type ScheduleRequest struct {
	// Name is 1 to 64 letters, digits, '.', '_' or '-', starting with a
	// letter or digit; each run's instance id is the name, ':' and its
	// slot (nightly:2026-11-27T03:00:00Z).
	Name string `json:"name"`
	// Cron is a cron expression of five fields (minute hour day-of-month
	// month day-of-week) or a descriptor (@hourly, @daily, …), read in
	// Timezone (an IANA name; empty: UTC). Every, instead, is an
	// interval, at least 1s, whose slots are its multiples since the Unix
	// epoch. Exactly one of them is set.
	Cron     string `json:"cron,omitempty"`
	Every    string `json:"every,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	// Orchestration is what each run starts, with Input (JSON; empty:
	// null), on Module (a hash or a unique prefix of one; empty: the
	// newest module that registers the orchestration when the run starts).
	Orchestration string          `json:"orchestration"`
	Module        string          `json:"module,omitempty"`
	Input         json.RawMessage `json:"input,omitempty"`
	// Overlap is what a slot does while the last run runs: skip (the
	// default), buffer-one, allow-all or cancel-other.
	Overlap string `json:"overlap,omitempty"`
	// CatchupWindow is how late a slot may still start after downtime
	// (empty: 1h); Jitter delays each slot's start by up to it (empty:
	// none).
	CatchupWindow string `json:"catchupWindow,omitempty"`
	Jitter        string `json:"jitter,omitempty"`
	// Paused creates the schedule paused, with Note saying why.
	Paused bool   `json:"paused,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Schedule is a schedule as it stands (GET /v1/schedules/{name}, and each
// of GET /v1/schedules).
type Schedule struct {
	Name          string          `json:"name"`
	Cron          string          `json:"cron,omitempty"`
	Every         string          `json:"every,omitempty"`
	Timezone      string          `json:"timezone,omitempty"`
	Orchestration string          `json:"orchestration"`
	Module        string          `json:"module,omitempty"`
	Input         json.RawMessage `json:"input"`
	Overlap       string          `json:"overlap"`
	CatchupWindow string          `json:"catchupWindow"`
	Jitter        string          `json:"jitter,omitempty"`
	Paused        bool            `json:"paused"`
	Note          string          `json:"note,omitempty"`
	// NextRuns are the next slots' start times (jitter added), up to 5;
	// none while paused.
	NextRuns []time.Time `json:"nextRuns"`
	// Buffered is the slot held back until the last run ends, if any.
	Buffered *time.Time `json:"buffered,omitempty"`
	// LastInstance is the instance of the last run started.
	LastInstance string `json:"lastInstance,omitempty"`
	// Started, Skipped and Missed count the runs started and the slots
	// passed over: because the last run was running, or because they
	// came later than the catch-up window.
	Started   int64     `json:"started"`
	Skipped   int64     `json:"skipped"`
	Missed    int64     `json:"missed"`
	CreatedAt time.Time `json:"createdAt"`
	// Runs are the last slots decided, newest first, up to 20: in the
	// answers about one schedule (GET /v1/schedules/{name}, and those of
	// pause, resume and delete), not in the list.
	Runs []ScheduleRun `json:"runs,omitempty"`
}

// ScheduleList is the answer to GET /v1/schedules: every schedule, by
// name, without their runs.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
}

// ScheduleRun is one slot of a schedule and what became of it (the answer
// to POST /v1/schedules/{name}/trigger, and each of Schedule.Runs).
type ScheduleRun struct {
	// Slot is the slot's time, or when a manual run was triggered.
	Slot    time.Time `json:"slot"`
	FiredAt time.Time `json:"firedAt"`
	// Outcome is started, skipped (the last run was running), buffered
	// (held back until the last run ends), existed (the run's instance id
	// was taken: the slot had fired) or failed (the run could not start:
	// Error says why).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// InstanceID is the run's instance (started, existed).
	InstanceID string `json:"instanceId,omitempty"`
	// Manual marks a run triggered by hand.
	Manual bool `json:"manual,omitempty"`
}

// PauseRequest is the body of POST /v1/schedules/{name}/pause (optional).
type PauseRequest struct {
	// Note says why.
	Note string `json:"note,omitempty"`
}
