package api

import (
	"encoding/json"
	"errors"
	"time"
)

// The bodies of batches: POST /v1/batches, GET /v1/batches and
// /v1/batches/{id}, POST /v1/batches/{id}/stop.

// ErrBatchNotFound is returned when no batch has the id a request gives.
var ErrBatchNotFound = errors.New("host: batch not found")

// ErrBatchNotRunning is returned by StopBatch when the batch has
// completed or was stopped already.
var ErrBatchNotRunning = errors.New("host: batch not running")

// The actions of a batch.
const (
	BatchCancel    = "cancel"
	BatchTerminate = "terminate"
	BatchRaise     = "raise"
	BatchReset     = "reset"
	BatchUpgrade   = "upgrade"
)

// BatchActions lists the actions a batch takes.
func BatchActions() []string {
	return []string{BatchCancel, BatchTerminate, BatchRaise, BatchReset, BatchUpgrade}
}

// The reset points of a batch's reset (BatchRequest.ResetTo), beside an
// event's number.
const (
	// ResetLastFailure keeps the events before the last failure of the
	// current execution: the last activity or child that failed, or else
	// the end of a failed execution; the step that met it runs again.
	ResetLastFailure = "last-failure"
	// ResetStart keeps the execution's first step only: it runs again
	// from its start, with its input.
	ResetStart = "start"
)

// BatchRequest starts a batch (POST /v1/batches, whose query holds the
// filter of GET /v1/instances that selects the instances): Action on
// each instance the filter selects now.
type BatchRequest struct {
	// Action is cancel, terminate, raise, reset or upgrade.
	Action string `json:"action"`
	// Reason is a cancel's or a terminate's reason.
	Reason string `json:"reason,omitempty"`
	// Event, Data and Persistent are a raise's: the event's name, its
	// data (JSON; empty: null), and whether it waits in the instance's
	// mailbox (as POST /v1/instances/{id}/events's persistent).
	Event      string          `json:"event,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Persistent bool            `json:"persistent,omitempty"`
	// ResetTo is a reset's point in each instance's current execution:
	// "last-failure", "start", or an event's number (as POST
	// /v1/instances/{id}/reset's toEvent). Module is the module a reset
	// goes on with (empty: each instance's own), and the module an upgrade
	// moves to (required): a hash or a unique prefix of one.
	ResetTo string `json:"resetTo,omitempty"`
	Module  string `json:"module,omitempty"`
	// Rate is the most instances a second the batch takes; zero for no
	// limit.
	Rate float64 `json:"rate,omitempty"`
	// DryRun lists the instances the filter selects, and starts nothing.
	DryRun bool `json:"dryRun,omitempty"`
}

// BatchDryRun answers a dry run: how many instances the filter selects,
// and the ids of up to MaxDryRunIDs of them, newest first.
type BatchDryRun struct {
	Matched int      `json:"matched"`
	IDs     []string `json:"ids"`
	DryRun  bool     `json:"dryRun"`
}

// MaxDryRunIDs is how many ids a dry run lists.
const MaxDryRunIDs = 1000

// Batch is a batch as it stands (GET /v1/batches/{id}, each of GET
// /v1/batches, and the answer to POST /v1/batches).
type Batch struct {
	ID     int64  `json:"id"`
	Action string `json:"action"`
	// Request is the action's arguments, as given (without the filter).
	Request BatchRequest `json:"request"`
	// Filter is the filter that selected the instances, as the query of
	// GET /v1/instances.
	Filter string `json:"filter"`
	// By is the name of the token that started it: each change it makes
	// is recorded as that token's.
	By string `json:"by,omitempty"`
	// State is running, completed or stopped.
	State string `json:"state"`
	// Matched counts the instances the filter selected when the batch
	// started; Done, Failed and Skipped those it has taken, by outcome
	// (skipped: nothing to do, such as an instance that had finished).
	Matched int64 `json:"matched"`
	Done    int64 `json:"done"`
	Failed  int64 `json:"failed"`
	Skipped int64 `json:"skipped"`
	// LastInstance is the last instance it took; it takes them in the
	// order of their ids.
	LastInstance string `json:"lastInstance,omitempty"`
	// LastError says why the last instance that failed did.
	LastError string    `json:"lastError,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Failures are the instances that failed (up to MaxBatchFailures),
	// each with why; GET /v1/batches/{id} only.
	Failures []BatchFailure `json:"failures,omitempty"`
}

// BatchFailure is an instance a batch failed to change, and why.
type BatchFailure struct {
	InstanceID string `json:"instanceId"`
	Error      string `json:"error"`
}

// MaxBatchFailures is how many failures GET /v1/batches/{id} lists.
const MaxBatchFailures = 100

// BatchList answers GET /v1/batches: the newest batches first.
type BatchList struct {
	Batches []Batch `json:"batches"`
}
