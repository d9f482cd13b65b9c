package api

import (
	"encoding/json"
	"fmt"

	"github.com/durabox/durabox/engine"
)

// The bodies of changing code under running instances: replaying an
// instance on a module, upgrading the instances of one module to another,
// and resetting an instance.

// ReplayRequest says what GET /v1/instances/{id}/replay replays: its query.
type ReplayRequest struct {
	// Module is a module hash, or a unique prefix of one. Empty means the
	// instance's own module.
	Module string
	// Execution is the execution to replay, from 1. Zero means the current
	// one.
	Execution int64
}

// Divergence is where a replay left history: the engine's
// *engine.NondeterminismError, field by field.
type Divergence struct {
	Code engine.NondeterminismCode `json:"code"`
	// EventID is the history event where the replay diverged.
	EventID int64 `json:"eventId"`
	// History describes the event history has there; Emitted, the command
	// the code emitted instead ("" for none).
	History string `json:"history"`
	Emitted string `json:"emitted,omitempty"`
	// Message is the error's text, with both sides.
	Message string `json:"message"`
}

// ReplayReport is the outcome of replaying one execution's history on a
// module: the answer to GET /v1/instances/{id}/replay.
type ReplayReport struct {
	InstanceID string `json:"instanceId"`
	Execution  int64  `json:"execution"`
	// Module is the module replayed on.
	Module string `json:"module"`
	// Events is the length of the history replayed.
	Events int `json:"events"`
	// Status is where the replay left the orchestration.
	Status engine.Status `json:"status,omitempty"`
	// Divergence is set when the code does not reproduce the history.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Failure is set when the replay failed otherwise: the code crashed,
	// or the module did not start.
	Failure string `json:"failure,omitempty"`
}

// OK reports whether the code reproduced the history.
func (r *ReplayReport) OK() bool { return r.Divergence == nil && r.Failure == "" }

// Err returns nil when the code reproduced the history, and otherwise an
// error that says where it diverged, or why it failed.
func (r *ReplayReport) Err() error {
	why := r.Failure
	if r.Divergence != nil {
		why = r.Divergence.Message
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("durabox: replay of instance %s, execution %d, on module %.12s: %s", r.InstanceID, r.Execution, r.Module, why)
}

// UpgradeRequest is the body of POST /v1/upgrades.
type UpgradeRequest struct {
	// From and To are module hashes, or unique prefixes of them. With To
	// empty, From is an orchestration's name: To is the newest module that
	// registers it, and the instances are those of the orchestration open
	// on any older module.
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	// DryRun checks every instance and moves none.
	DryRun bool `json:"dryRun,omitempty"`
	// Instances, when set, limits the upgrade to these instances, each of
	// which must be one the upgrade would check. Empty means all of them.
	Instances []string `json:"instances,omitempty"`
	// Parallel is how many replays run at once. Zero means one per CPU.
	Parallel int `json:"parallel,omitempty"`
}

// The outcomes of an instance in an upgrade.
const (
	// UpgradeCompatible: To replays its history (a dry run moves nothing).
	UpgradeCompatible = "compatible"
	// UpgradeMoved: To replays its history, and it moved to To.
	UpgradeMoved = "moved"
	// UpgradeDiverges: To does not reproduce its history; it stays.
	UpgradeDiverges = "diverges"
	// UpgradeFails: To crashes replaying its history, or does not register
	// an activity the instance has in flight; it stays.
	UpgradeFails = "fails"
	// UpgradeSkipped: it was not decided (it finished or moved meanwhile,
	// or a turn held it every time it was tried); it stays.
	UpgradeSkipped = "skipped"
)

// UpgradePlan is what an upgrade is about to do: the first line of the
// answer to POST /v1/upgrades.
type UpgradePlan struct {
	// From are the modules the instances run on, newest first: From of
	// the request, or with an orchestration's name, those of its older
	// modules that have open instances of it (the one before the newest,
	// when none has).
	From []string `json:"from"`
	To   string   `json:"to"`
	// Orchestrations are the orchestrations the instances run (with no
	// instance, those the two modules share).
	Orchestrations []string `json:"orchestrations"`
	// Instances is how many open instances the upgrade checks.
	Instances int  `json:"instances"`
	DryRun    bool `json:"dryRun,omitempty"`
}

// UpgradeResult is one instance's outcome in an upgrade.
type UpgradeResult struct {
	InstanceID string `json:"instanceId"`
	Name       string `json:"name"`
	// From is the module the instance ran on when it was checked.
	From string `json:"from"`
	// Outcome is one of the Upgrade… outcomes.
	Outcome string `json:"outcome"`
	// Events is the length of the history checked.
	Events int `json:"events"`
	// Divergence is set when the outcome is diverges.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Reason says why, when the outcome is fails or skipped.
	Reason string `json:"reason,omitempty"`
}

// UpgradeSummary counts the outcomes of an upgrade.
type UpgradeSummary struct {
	Compatible int `json:"compatible"`
	Moved      int `json:"moved"`
	Diverges   int `json:"diverges"`
	Fails      int `json:"fails"`
	Skipped    int `json:"skipped"`
}

// Add counts one outcome.
func (s *UpgradeSummary) Add(outcome string) {
	switch outcome {
	case UpgradeCompatible:
		s.Compatible++
	case UpgradeMoved:
		s.Moved++
	case UpgradeDiverges:
		s.Diverges++
	case UpgradeFails:
		s.Fails++
	default:
		s.Skipped++
	}
}

// UpgradeLine is one line of the answer to POST /v1/upgrades, which is
// JSON lines (application/x-ndjson) sent as the upgrade goes: the plan
// first, then each instance's result as it is decided, then the summary;
// or, if the upgrade stopped, an error.
type UpgradeLine struct {
	Plan    *UpgradePlan    `json:"plan,omitempty"`
	Result  *UpgradeResult  `json:"result,omitempty"`
	Summary *UpgradeSummary `json:"summary,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// UpgradeReport is a whole upgrade.
type UpgradeReport struct {
	Plan UpgradePlan `json:"plan"`
	// Results are the instances' outcomes, in the order they were decided.
	Results []UpgradeResult `json:"results"`
	Summary UpgradeSummary  `json:"summary"`
}

// ResetRequest is the body of POST /v1/instances/{id}/reset.
type ResetRequest struct {
	// ToEvent is the last event of the current execution to keep.
	ToEvent int64 `json:"toEvent"`
	// Module is the module the instance goes on with: a hash or a unique
	// prefix of one. Empty means its own.
	Module string `json:"module,omitempty"`
	// DryRun plans the reset and changes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// Execution and Events, when set, are the execution and the length of
	// its history that a dry run planned with: the reset happens only if
	// the instance still has them (409 otherwise).
	Execution int64 `json:"execution,omitempty"`
	Events    int   `json:"events,omitempty"`
}

// Rerun is an activity that had completed after the reset point, and will
// run again.
type Rerun struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	// Scheduled and Completed are its events in the execution reset:
	// the one that scheduled it, and the one that ended it, which Outcome
	// names.
	Scheduled int64 `json:"scheduled"`
	Completed int64 `json:"completed"`
	// Outcome is how it ended: RerunCompleted or RerunFailed.
	Outcome string `json:"outcome"`
	// IfCalled says it was scheduled after the reset point too: it runs
	// again only if the code calls it again. Otherwise the reset queues it
	// again.
	IfCalled bool `json:"ifCalled,omitempty"`
}

// The outcomes of an activity a reset runs again.
const (
	// RerunCompleted: it completed (ActivityCompleted).
	RerunCompleted = "completed"
	// RerunFailed: its attempt failed (ActivityFailed).
	RerunFailed = "failed"
)

// ResetPlan is the answer to POST /v1/instances/{id}/reset: what the reset
// keeps, discards and does again, and whether it is done.
type ResetPlan struct {
	InstanceID string `json:"instanceId"`
	// Execution is the execution reset, Events the length of its history;
	// the instance goes on in execution Execution+1.
	Execution int64 `json:"execution"`
	Events    int   `json:"events"`
	// ToEvent is the last event kept.
	ToEvent int64 `json:"toEvent"`
	// FromModule is the module the instance ran on; Module the one it goes
	// on with.
	FromModule string `json:"fromModule"`
	Module     string `json:"module"`
	// Discarded are the events after ToEvent.
	Discarded []engine.Event `json:"discarded"`
	// RunAgain are the activities that ended, completed or failed, in
	// the discarded events.
	RunAgain []Rerun `json:"runAgain,omitempty"`
	// Raise are the events raised from outside in the discarded events,
	// which are raised again.
	Raise []engine.Event `json:"raise,omitempty"`
	// Detached are the children the discarded events started: they go on,
	// reporting to nobody.
	Detached []string `json:"detached,omitempty"`
	// Next are the events the new execution records after the kept ones
	// in its first turn: the reset marker, and the commands of the last
	// kept step on the module it goes on with.
	Next []engine.Event `json:"next"`
	// Taken are the ids of the children Next starts that an instance
	// already has: the new execution cannot start them, and each fails
	// with "instance id … is already taken". An id the host derives is
	// never taken; an id the orchestration chose may be, by the child of
	// an earlier run of the step.
	Taken []string `json:"taken,omitempty"`
	// Done is set once the reset has happened.
	Done bool `json:"done,omitempty"`
}
