package store

import (
	"context"
	"encoding/json"
	"time"
)

// BatchState is where a batch is: running until it has taken each of its
// instances, or stopped by hand before.
type BatchState string

// The states of a batch.
const (
	BatchRunning   BatchState = "running"
	BatchCompleted BatchState = "completed"
	BatchStopped   BatchState = "stopped"
)

// ItemOutcome is what a batch did with one of its instances.
type ItemOutcome string

// The outcomes of an instance in a batch.
const (
	// ItemDone: the action was carried out.
	ItemDone ItemOutcome = "done"
	// ItemFailed: the action was refused or failed (BatchStep.Detail
	// says why).
	ItemFailed ItemOutcome = "failed"
	// ItemSkipped: there was nothing to do (the instance had finished,
	// was purged, or was on the module already).
	ItemSkipped ItemOutcome = "skipped"
)

// Batch is an action carried out on every instance a filter selected when
// the batch was created (durabox batch): the store keeps it, with the ids
// of those instances, and each host's batch runner takes its instances in
// the order of their ids, one at a time, recording each.
type Batch struct {
	// ID is given by CreateBatch: from 1, increasing.
	ID int64
	// Action is what is done to each instance (cancel, terminate, raise,
	// reset, upgrade), with Args, its arguments (JSON, the host's).
	Action string
	Args   json.RawMessage
	// Filter is the filter that selected the instances, as the query of
	// GET /v1/instances: for people, and to list them again.
	Filter string
	// By names who created it (the token's name): each change it makes
	// is made as theirs.
	By string
	// Rate is the most instances a second it takes; zero for no limit.
	Rate  float64
	State BatchState
	// Matched counts the instances the filter selected; Done, Failed and
	// Skipped those it took, by outcome.
	Matched, Done, Failed, Skipped int64
	// LastInstance is the last instance it took (empty before the
	// first): the next is the first id after it.
	LastInstance string
	// LastError is the detail of the last instance that failed.
	LastError string
	// CreatedAt, UpdatedAt: when it was created, and last changed.
	CreatedAt, UpdatedAt time.Time
}

// BatchItem is one instance of a batch and what became of it (empty
// Outcome: not taken yet).
type BatchItem struct {
	InstanceID string
	Outcome    ItemOutcome
	Detail     string
}

// BatchStep records what a batch's runner did with the instance after
// After (BatchStep.Instance), or, with Instance empty, that none is left
// (the batch completes).
type BatchStep struct {
	ID int64
	// Owner is the runner that holds the batch (ClaimBatches).
	Owner string
	// After is the batch's LastInstance as the runner read it: the step
	// is recorded only if it still is.
	After    string
	Instance string
	Outcome  ItemOutcome
	Detail   string
	Now      time.Time
	// LeaseUntil, with Instance, extends the runner's lease of the
	// batch to it.
	LeaseUntil time.Time
}

// Batches keeps the batches. The API creates, lists and stops them; each
// host's batch runner claims the running ones (ClaimBatches), reads their
// instances (BatchItems) and records each one it takes (StepBatch), so
// that a host that stops, or dies, leaves a batch where the next runner
// picks it up: at the instance after the last one recorded.
type Batches interface {
	// CreateBatch stores b as a new running batch with the instances f
	// selects as its items, atomically, and returns it with its ID and
	// Matched.
	CreateBatch(ctx context.Context, b Batch, f InstanceFilter) (Batch, error)
	// GetBatch returns a batch, or ErrNotFound.
	GetBatch(ctx context.Context, id int64) (Batch, error)
	// ListBatches returns up to max batches, newest first.
	ListBatches(ctx context.Context, max int) ([]Batch, error)
	// BatchItems returns up to max items of a batch whose instance ids
	// come after after, in the order of their ids; with taken, only the
	// items taken already (for people: the failed ones, say).
	BatchItems(ctx context.Context, id int64, after string, max int, taken bool) ([]BatchItem, error)
	// ClaimBatches gives owner the running batches that no other runner
	// holds (or whose holder's lease ended before now) and extends
	// owner's lease of those it holds, until now+lease, and returns them.
	ClaimBatches(ctx context.Context, owner string, now time.Time, lease time.Duration) ([]Batch, error)
	// ReleaseBatches ends owner's leases of batches, so that another
	// runner may take them at once.
	ReleaseBatches(ctx context.Context, owner string) error
	// StepBatch records s, atomically: the item's outcome, the batch's
	// counts and LastInstance, and the lease extended to s.LeaseUntil (or,
	// with s.Instance empty, that the batch completed). It returns ErrLeaseLost when s.Owner no longer holds
	// the batch, or the batch is no longer running, or no longer at
	// s.After: nothing changed.
	StepBatch(ctx context.Context, s BatchStep) error
	// StopBatch stops a running batch at now: it takes no more
	// instances. It returns ErrNotFound, or ErrFinished when the batch is
	// no longer running.
	StopBatch(ctx context.Context, id int64, now time.Time) error
	// DeleteBatches deletes up to max (max ≥ 1) of the batches that
	// ended (completed or stopped) before before, oldest first, each with
	// its items, and returns how many; a running batch stays, however
	// old. The host's retention sweep calls it until fewer than max are
	// deleted.
	DeleteBatches(ctx context.Context, before time.Time, max int) (int, error)
}
