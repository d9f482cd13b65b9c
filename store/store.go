// Package store defines the storage interface of a Durabox host.
//
// A Store keeps modules, instances, their histories, the messages waiting for
// each instance (including timers, which are messages that become visible
// when due) and the activity tasks waiting for workers. Everything a turn
// changes is committed by one CommitTurn call, atomically. Work is leased:
// a locked instance or an activity task that is not committed before its
// lease expires is handed out again.
//
// A store decides no rule of the model: every message it delivers is the
// engine's (engine.StartMessage, engine.ChildNotStarted, engine.Report,
// TimerTask.Fired, the ContinueAsNew's Started and Carried, and
// engine.OutlivesExecution for what an ended execution left), made from
// the facts only the store knows at commit (whether an id is free, which
// parent waits). It moves bytes, and keeps them atomic, leased and in order.
// Beside the instances it keeps the schedules (Schedules), the batches
// of actions on many instances (Batches) and the audit log of the changes
// asked through the API (Audit).
// store/storetest pins each of these down.
//
// store/sqlite is the default implementation, for one host; store/postgres
// lets several hosts share one PostgreSQL database.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store/query"
)

// Sentinel errors. Implementations wrap them with the specifics.
var (
	// ErrNotFound is returned when a module or instance does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInstanceExists is returned by CreateInstance when the id is taken.
	ErrInstanceExists = errors.New("instance already exists")
	// ErrLeaseLost is returned when a commit names a lock or lease that has
	// expired and been handed to someone else, or no longer exists.
	ErrLeaseLost = errors.New("lease lost")
	// ErrNotFinished is returned by Purge when the instance has not reached
	// a terminal status (engine.Status.IsTerminal).
	ErrNotFinished = errors.New("instance not finished")
	// ErrBusy is returned by MoveInstance and ResetInstance when a turn
	// holds the instance's lock: try again once the turn has committed.
	ErrBusy = errors.New("instance busy running a turn")
	// ErrChanged is returned by MoveInstance and ResetInstance when the
	// instance is no longer as the caller read it (its history went on, it
	// finished, it moved): read it again, and decide again.
	ErrChanged = errors.New("instance changed")
	// ErrFinished is returned by Enqueue and EnqueuePersistent when the
	// instance has reached a terminal status: nothing would take the
	// message.
	ErrFinished = errors.New("instance finished")
	// ErrTooManyEvents is returned by EnqueuePersistent when the instance's
	// execution has as many persistent events as it may take.
	ErrTooManyEvents = errors.New("too many persistent events")
	// ErrTurnNotCommitted is returned by Handoff.CompleteAndTurn when it
	// recorded the activity's outcome but the turn made of it did not
	// commit: the instance stays locked by that turn's work item, for the
	// caller to let go (AbandonInstance), and the outcome waits for a turn
	// of its own.
	ErrTurnNotCommitted = errors.New("the activity's outcome is recorded, but the turn made of it was not committed")
	// ErrModuleInUse is returned by DeleteModule when instances run on the
	// module.
	ErrModuleInUse = errors.New("module in use")
	// ErrBadCursor is returned by ListInstances when InstanceQuery.After
	// is not a cursor it returned.
	ErrBadCursor = errors.New("bad cursor")
	// ErrCorrupt is returned by History when a row of the history does
	// not decode, and is the Corrupt of a message whose row does not: the
	// database was damaged or edited by hand, and reading it again gives
	// the same.
	ErrCorrupt = errors.New("corrupt row")
	// ErrFull is returned by a write that failed because the disk (the
	// file system) that holds the database is full: nothing of it was
	// written, and writes succeed again once there is space.
	ErrFull = errors.New("the disk holding the database is full")
	// ErrDiskFailed is returned by a write that the disk holding the
	// database failed (an I/O error, EIO, writing or syncing it): it was
	// not acknowledged, and writes succeed again once the disk does. A
	// write whose sync failed may or may not be kept: ask again (what was
	// asked is idempotent, or refused as done the second time).
	ErrDiskFailed = errors.New("the disk holding the database failed a write")
	// ErrUnavailable is returned by a read or a write that the database
	// server did not answer (it is down, restarting, or out of reach)
	// after the store tried again for a while, or whose commit's answer
	// was lost: ask again later (what was asked is idempotent, or refused
	// as done the second time).
	ErrUnavailable = errors.New("the database server does not answer")
)

// Module is a deployed guest module.
type Module struct {
	// Hash is the hex sha256 of Wasm; it identifies the module.
	Hash string
	Wasm []byte
	// Orchestrations and Activities are the names the module registers.
	Orchestrations []string
	Activities     []string
	// Env holds the "KEY=value" environment variables its activities see.
	Env        []string
	DeployedAt time.Time
}

// ModuleInfo is a Module without its bytes.
type ModuleInfo struct {
	Hash           string
	Orchestrations []string
	Activities     []string
	Env            []string
	DeployedAt     time.Time
}

// EnvKeys returns the names of the environment variables ("KEY=value")
// its activities see, without their values, which are secrets.
func (m ModuleInfo) EnvKeys() []string {
	keys := make([]string, len(m.Env))
	for i, kv := range m.Env {
		keys[i], _, _ = strings.Cut(kv, "=")
	}
	return keys
}

// Instance is an orchestration instance's current state.
type Instance struct {
	ID   string
	Name string
	// ModuleHash is the module the instance started with; it always runs on it.
	ModuleHash  string
	ExecutionID int64
	Status      engine.Status
	Input       json.RawMessage
	Result      json.RawMessage
	Failure     *engine.Failure
	// CustomStatus is the status text the orchestration set last.
	CustomStatus string
	// ParentID is the instance that started this one as its child (or
	// detached), if any and not purged.
	ParentID  string
	CreatedAt time.Time
	// UpdatedAt is the time of the last commit that changed the instance;
	// once it has finished, when it finished.
	UpdatedAt time.Time
}

// Summary returns the instance without its input, result and failure.
func (i Instance) Summary() InstanceSummary {
	return InstanceSummary{ID: i.ID, Name: i.Name, ModuleHash: i.ModuleHash, ExecutionID: i.ExecutionID, Status: i.Status,
		CustomStatus: i.CustomStatus, ParentID: i.ParentID, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt}
}

// InstanceSummary is an instance as lists show it: without its input,
// result and failure, which may be large.
type InstanceSummary struct {
	ID           string
	Name         string
	ModuleHash   string
	ExecutionID  int64
	Status       engine.Status
	CustomStatus string
	ParentID     string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// InstanceFilter selects instances: those that match every field set. The
// zero value selects every instance.
type InstanceFilter struct {
	// Statuses, when not empty, selects the instances with one of them.
	Statuses []engine.Status
	// Name, when set, selects the instances of that orchestration.
	Name string
	// ModuleHash, when set, selects the instances that run on that module.
	ModuleHash string
	// IDPrefix, when set, selects the instances whose id begins with it.
	IDPrefix string
	// ParentID, when set, selects the children of that instance.
	ParentID string
	// CreatedAfter and CreatedBefore, when not zero, select the instances
	// created at or after CreatedAfter and before CreatedBefore.
	CreatedAfter, CreatedBefore time.Time
	// FinishedBefore, when not zero, selects the finished instances
	// (engine.Status.IsTerminal) that finished before it.
	FinishedBefore time.Time
	// ProgressedBefore, when not zero, selects the instances not finished
	// (Pending or Running) whose last progress, the last commit that
	// changed them (Instance.UpdatedAt), came before it: stalled since.
	ProgressedBefore time.Time
	// WaitingOn, when not empty, selects the instances not finished that
	// wait on any of these kinds, as their last turn left them
	// (TurnCommit.WaitingOn).
	WaitingOn []engine.WaitKind
	// Where, when set, selects the instances the filter holds for
	// (store/query: search attributes and the built-in fields).
	Where query.Expr
}

// Unfinished are the statuses of the instances that have not finished.
var Unfinished = []engine.Status{engine.StatusPending, engine.StatusRunning}

// Check refuses a filter with a status no instance can have.
func (f InstanceFilter) Check() error {
	for _, s := range f.Statuses {
		if !slices.Contains(engine.Statuses(), s) {
			return fmt.Errorf("%s is not a status; an instance is %v", abi.Quote(string(s)), engine.Statuses())
		}
	}
	for _, k := range f.WaitingOn {
		if !slices.Contains(engine.WaitKinds(), k) {
			return fmt.Errorf("%s is not a kind of wait; an instance waits on %v", abi.Quote(string(k)), engine.WaitKinds())
		}
	}
	return nil
}

// InstanceQuery asks ListInstances for a page of instances, newest first
// (of those created at the same time, the one created last first).
type InstanceQuery struct {
	Filter InstanceFilter
	// After continues a listing: the Next of the page before. Empty means
	// the first page.
	After string
	// Limit is the most instances the page holds, at least 1.
	Limit int
}

// InstancePage is a page of instances.
type InstancePage struct {
	Instances []InstanceSummary
	// Next, when not empty, is the After of the next page: there may be
	// more. Instances created meanwhile are newer, and come before it.
	Next string
}

// InstanceCount is how many instances of a module have a status.
type InstanceCount struct {
	ModuleHash string
	Status     engine.Status
	Count      int
}

// Execution describes one execution of an instance whose history is kept.
type Execution struct {
	// ID numbers the executions of an instance from 1.
	ID int64
	// Events is the length of its history.
	Events int64
	// StartedAt is the time of its first event (zero if it has not begun).
	StartedAt time.Time
	// EndedAt is the time of the event that ended it, and End that event's
	// kind; zero and empty while it runs.
	EndedAt time.Time
	End     engine.EventKind
}

// QueueStats describes the work waiting in a store at a time now.
type QueueStats struct {
	// Ready counts the messages visible at now, for ReadyInstances
	// instances (new instances' starts among them: Starts).
	Ready, ReadyInstances, Starts int
	// OldestReady is the ready message that has waited longest, if any.
	OldestReady *WaitingItem
	// Timers counts the timers not yet due of the instances that have
	// not finished (a finished instance's timers wait for no one, though
	// they are kept until it is purged); NextTimer is the first of them
	// to come due.
	Timers    int
	NextTimer time.Time
	// Locked counts the instances that a worker holds (running a turn).
	Locked int
	// Activities counts the activity tasks waiting for a worker, Running
	// those a worker holds, and Retrying those waiting for the next
	// attempt their retry policy allows (RetryActivity), not yet due.
	Activities, Running, Retrying int
	// OldestActivity is the waiting activity task that has waited longest
	// (since it was queued, or since its retry came due), if any.
	OldestActivity *WaitingItem
	// Queues describes the named task queues that hold tasks, by name
	// (their tasks are also in Activities and Running).
	Queues []TaskQueueStats
}

// TaskQueueStats counts the tasks of one task queue: those waiting for a
// worker, and those a worker holds.
type TaskQueueStats struct {
	Queue            string
	Waiting, Running int
}

// WaitingItem is a message or an activity task that waits.
type WaitingItem struct {
	InstanceID string
	// What is the message's event kind, or the activity's name.
	What string
	// Since is when it became ready: when it was stored, or for a timer,
	// when it came due.
	Since time.Time
}

// NewInstance describes an instance to create.
type NewInstance struct {
	ID         string
	Name       string
	ModuleHash string
	Input      json.RawMessage
	Now        time.Time
	// LastRun, for a run of a schedule, is the schedule's last run that
	// finished, whose result or failure its start message carries
	// (engine.ScheduledStart); nil for none.
	LastRun *LastRun
	// By names who started it through the API (engine.Event.By), which
	// its start message carries; empty for none.
	By string
	// Audit, when not nil, is the audit record of the request that
	// starts it (AuditRecord), stored in the create's own transaction:
	// it commits with the instance, and a create that fails stores none.
	// Its ID is given, as AppendAudit gives it.
	Audit *AuditRecord
}

// LastRun is the end of a schedule's last run that finished: its result,
// or its failure.
type LastRun struct {
	Result  json.RawMessage
	Failure *engine.Failure
}

// UpdateState is where an update is: waiting to be delivered, accepted
// (its handler runs), or answered (completed, failed or refused).
type UpdateState string

// The states of an update.
const (
	UpdateRequested UpdateState = "Requested"
	UpdateAccepted  UpdateState = "Accepted"
	UpdateCompleted UpdateState = "Completed"
	UpdateFailed    UpdateState = "Failed"
	UpdateRefused   UpdateState = "Refused"
)

// Answered reports whether the update has its answer.
func (s UpdateState) Answered() bool {
	return s == UpdateCompleted || s == UpdateFailed || s == UpdateRefused
}

// Update is a client's update of an instance and what became of it. Its
// ID is unique in the instance: a request with an ID the instance has
// already had gets this record, and runs nothing again.
type Update struct {
	InstanceID, ID, Name string
	Input                json.RawMessage
	State                UpdateState
	// Result is the handler's answer (UpdateCompleted); Failure its error
	// (UpdateFailed), why it was refused (UpdateRefused), or why the
	// instance never answered (UpdateFailed).
	Result      json.RawMessage
	Failure     *engine.Failure
	RequestedAt time.Time
	// AnsweredAt is when it was answered; zero until then.
	AnsweredAt time.Time
	// By names who sent it through the API (engine.Event.By): its
	// message carries it, into the instance's history; the store does not
	// keep it beside the update.
	By string
}

// RefusedUpdate is an update the orchestration refused, in the turn that
// refused it (TurnCommit.Refused).
type RefusedUpdate struct {
	UpdateID string
	Failure  *engine.Failure
}

// Outgoing is a message for another instance.
type Outgoing struct {
	InstanceID string
	Event      engine.Event
}

// NewChild describes a child instance to create.
type NewChild struct {
	ID, Name string
	// ModuleHash is the module to run it on; empty when no deployed module
	// registers Name.
	ModuleHash string
	Input      json.RawMessage
	// ScheduleID is the parent's SubOrchestrationScheduled (or
	// OrchestrationChained) event.
	ScheduleID int64
	Detached   bool
}

// Message is a message waiting for an instance: an engine event whose ID and
// Time the engine has not assigned yet.
type Message struct {
	// ID identifies the message in the store, to remove it once consumed.
	ID    int64
	Event engine.Event
	// Corrupt, when set, says why the message's row does not decode
	// (wrapping ErrCorrupt); its Event is then empty.
	Corrupt error
}

// WorkItem is one locked instance with everything its next turn needs.
type WorkItem struct {
	Instance Instance
	// HistoryLen is the number of events in the current execution's
	// persisted history. The work item does not carry them: a host that
	// kept the instance in memory has them already, and one that did not
	// reads them with History.
	HistoryLen int64
	// Attempt counts deliveries of this turn, from 1: the times the instance
	// was locked since its last commit. More than one means earlier
	// deliveries ended without a commit (a crash, a lost lock, an abandon).
	Attempt int
	// Messages are the instance's visible messages, oldest first.
	Messages []Message
	// LockToken must be passed back to CommitTurn or Abandon.
	LockToken string
}

// ActivityWork is an activity task to run, with where it came from.
type ActivityWork struct {
	// ID identifies the task in the store.
	ID          int64
	InstanceID  string
	ExecutionID int64
	ModuleHash  string
	Task        engine.ActivityTask
	// Attempt counts deliveries of this task since it was queued, or
	// retried (RetryActivity), from 1.
	Attempt int
	// Failures counts the attempts of this task that failed and were
	// retried (RetryActivity): the attempt this delivery runs is
	// Failures+1 of its retry policy. LastFailure is the failure of the
	// last of them; nil when there is none.
	Failures    int
	LastFailure *engine.Failure
	LockToken   string
	// Heartbeat is the details of the last heartbeat an earlier delivery
	// sent (Activities.Heartbeat), if any.
	Heartbeat json.RawMessage
	// Unanswered says that the attempt before this delivery waited to be
	// completed from outside (AwaitCompletion) and was not, by its
	// deadline: the wait ran out.
	Unanswered bool
}

// LeaseFor is the lease a delivery of w is given when a worker asks for
// lease: its call's heartbeat timeout, if the orchestration set one (an
// attempt that sends no heartbeat for that long is over, and its task
// goes to another worker), or else lease.
func LeaseFor(w *ActivityWork, lease time.Duration) time.Duration {
	if w.Task.HeartbeatTimeout > 0 {
		return w.Task.HeartbeatTimeout
	}
	return lease
}

// ActivityTaskInfo describes an activity task (Activities.ActivityTasks).
type ActivityTaskInfo struct {
	ScheduleID int64
	Name       string
	// Queue is its task queue; empty: the host's own.
	Queue string
	// Attempt counts its deliveries so far; Running says whether a
	// worker holds it now.
	Attempt int
	Running bool
	// Heartbeat is the details of the last heartbeat an attempt sent.
	Heartbeat  json.RawMessage
	EnqueuedAt time.Time
	// Timeout is the deadline of each attempt the orchestration set (zero:
	// the host's). Failures counts the attempts that failed and were
	// retried, LastFailure is the last of them, and RetryAt, when not
	// zero, is when the next attempt may begin (RetryActivity).
	Timeout     time.Duration
	Failures    int
	LastFailure *engine.Failure
	RetryAt     time.Time
}

// Retrying sets what RetryAt says of a task with failures failed
// attempts, ready at visibleAt, at now.
func (t *ActivityTaskInfo) Retrying(failures int, visibleAt, now time.Time) {
	t.Failures = failures
	if failures > 0 && visibleAt.After(now) {
		t.RetryAt = visibleAt
	}
}

// TaskPoll is what a worker outside the host asks for
// (Activities.LockQueuedActivities): tasks of its task queue, Queue, and
// of the activity names it serves, Names (any, if empty).
type TaskPoll struct {
	Queue string
	Names []string
}

// Check says what is wrong with p, if anything.
func (p TaskPoll) Check() error {
	if err := abi.CheckTaskQueue(p.Queue); err != nil {
		return err
	}
	for _, n := range p.Names {
		if err := abi.CheckName("activity name", n); err != nil {
			return err
		}
	}
	return nil
}

// TurnCommit is everything one turn changes, committed atomically.
type TurnCommit struct {
	InstanceID  string
	ExecutionID int64
	LockToken   string
	// Now is the time of the turn: the instance's UpdatedAt, the
	// CreatedAt of its children, when a continued execution ended.
	// Required.
	Now time.Time
	// NewEvents are appended to the execution's history.
	NewEvents  []engine.Event
	Activities []engine.ActivityTask
	Timers     []engine.TimerTask
	Status     engine.Status
	Result     json.RawMessage
	Failure    *engine.Failure
	// Consumed are the message IDs the turn used; they are removed.
	Consumed []int64
	// WaitingOn are the kinds of what the instance waits on after the
	// turn (engine.TurnResult.WaitingOn), for InstanceFilter.WaitingOn, and
	// Waits the waits kept for Instances.Waits (engine.TurnResult.Waits);
	// both replace what
	// the instance's row held, unless Refused is set (a refused update
	// changes nothing it waits on).
	WaitingOn []engine.WaitKind
	Waits     []engine.Wait
	// Children are instances to create with the turn. A child that is not
	// Detached reports its end to this instance as a
	// SubOrchestrationCompleted or SubOrchestrationFailed message naming its
	// ScheduleID. A child that cannot start (no module, id taken) fails at
	// once, reported the same way, as engine.ChildNotStarted words it.
	// Its first message is engine.StartMessage.
	Children []NewChild
	// CustomStatus, when set, replaces the instance's custom status.
	CustomStatus *string
	// Attributes are the search attributes the turn set
	// (engine.TurnResult.Attributes): each replaces the instance's
	// attribute of its name, and one without a type deletes it. A
	// ContinueAsNew then clears them all: the next execution starts
	// without search attributes.
	Attributes []abi.Attribute
	// Outgoing are messages for other instances (a cancellation for a
	// child); one for an instance that does not exist is dropped.
	Outgoing []Outgoing
	// Raises are the events the turn raised at instances (itself among
	// them, maybe). Each goes to its instance as RaiseTask.Message, under
	// the rules of Enqueue and EnqueuePersistent (a persistent one within
	// engine.MaxPersistentEvents), and this instance gets, in the same
	// commit, RaiseTask.Delivered or, when the target does not exist, has
	// finished or takes no more persistent events, RaiseTask.NotDelivered
	// saying which.
	Raises []engine.RaiseTask
	// DropWaiting removes, with the commit, the messages of the instance
	// left unconsumed (timers not due among them) and its activity tasks
	// that no worker holds. For an execution that ends without waiting for
	// what it started (a terminated instance).
	//
	// Whatever it says, a commit removes the tasks waiting for a retry
	// (RetryActivity) that no worker holds of the activities whose
	// ActivityCancelRequested it records, and, when Status ends the
	// execution, all of the execution's: nobody would take what their
	// next attempts bring.
	DropWaiting bool
	// ContinueAsNew, when set, ends the execution (after NewEvents) and
	// starts the next one in the same commit: the instance becomes Pending
	// with the next ExecutionID and input Input, an empty history and, as
	// its messages, Started followed by the Carried events, then the
	// messages the ended execution left unconsumed that
	// engine.OutlivesExecution keeps, in their order. Its activity tasks
	// report to nobody, and its children no longer report. A commit whose
	// Started is not an OrchestrationStarted is refused.
	ContinueAsNew *engine.ContinueAsNew
	// Refused, when set, is an update the orchestration refused
	// (engine.TurnResult.Rejected): a commit that records it consumes only
	// its message, appends nothing, and leaves the instance as it was
	// (Status, Result and Failure as they are), so that the turn runs
	// again without the update. Every commit also answers the instance's
	// updates from what it records: an UpdateAccepted makes its update
	// UpdateAccepted, an UpdateCompleted answers it, and an execution that
	// ends (or continues as new) answers those it accepted and never
	// answered, and, when the instance ends, those never delivered, with
	// a failure saying so.
	Refused *RefusedUpdate
	// MaxPersistentEvents is how many persistent events an execution
	// takes, for the Raises: the host's setting. Zero means
	// engine.MaxPersistentEvents.
	MaxPersistentEvents int
}

// CommitStats describes one write transaction a store committed (or
// failed to), for an observer's metrics (the Options of store/sqlite take
// one).
type CommitStats struct {
	// Writes counts the writes the transaction held: a store that commits
	// several writes together (group commit) says how many.
	Writes int
	// Unsynced says the commit did not wait for the disk (SQLite) or the
	// server's WAL flush (PostgreSQL), since every write it held was of a
	// kind whose loss in a power cut loses nothing acknowledged (a lease,
	// an activity result, an audit record); the next synced commit makes
	// it durable with itself.
	Unsynced bool
	// Duration is the time from the transaction's start to its commit on
	// disk (as durable as the store makes it).
	Duration time.Duration
	// Err is why the transaction failed, or nil.
	Err error
}

// Move moves an instance to another module between two turns, recording
// the move in its history (durabox upgrade).
type Move struct {
	InstanceID string
	// ExecutionID and HistoryLen are the execution, and the length of its
	// history, that the caller found To replays: the move happens only if
	// the instance still has exactly them, runs on From, has not finished,
	// and no turn holds it.
	ExecutionID, HistoryLen int64
	From, To                string
	// Event is the engine.ModuleChanged event to append, with ID
	// HistoryLen+1.
	Event engine.Event
	// Now is the time a lock is compared with.
	Now time.Time
}

// Reset starts a new execution of an instance that keeps a prefix of the
// current execution's history and goes on from there, on Module
// (durabox reset). Everything is as engine.PlanReset planned it.
type Reset struct {
	InstanceID string
	// ExecutionID and HistoryLen are the execution reset, and the length
	// of its history, as the caller read them: the reset happens only if
	// the instance still has exactly them and no turn holds it. (It may
	// have finished.)
	ExecutionID, HistoryLen int64
	// Module is the module the new execution runs on.
	Module string
	// Kept are the events the new execution starts with, from 1.
	Kept []engine.Event
	// CustomStatus is the custom status the kept events leave.
	CustomStatus string
	// Attributes are the search attributes the kept events leave
	// (engine.Attributes): they replace the instance's.
	Attributes []abi.Attribute
	// Marker is the engine.ExecutionReset message, the new execution's
	// first.
	Marker engine.Event
	// InFlight is the work in flight at the end of Kept: its activity
	// tasks and timers are queued again for the new execution; a child it
	// waits for that has ended reports to it again, one still running
	// reports when it ends.
	InFlight engine.Work
	// Raise are the messages raised from outside in the discarded events,
	// delivered again after the marker.
	Raise []engine.Event
	// Detach are the children the discarded events started: they no
	// longer report to the instance.
	Detach []string
	// Now is the time a lock is compared with.
	Now time.Time
}

// Store is what a host needs from storage: every role, and Close. A host
// (host.New) takes one and hands each of its parts the roles it uses;
// store/sqlite and store/postgres are the two implementations, one SQL
// store written once over two dialects (store/internal/sqlstore).
type Store interface {
	Modules
	Instances
	Queue
	Activities
	Operations
	Schedules
	Batches
	Audit
	Health

	Close() error
}

// Modules keeps the deployed modules. The host's module registry calls
// it (deploy: PutModule; loading a module a turn needs: GetModule), as do
// Host.Start and the turn for a child (ModuleFor), the host's start-up
// (ModulesWithWork, to load what the waiting work needs), the server's
// module list (ListModules) and the operations (DeleteModule, replay's
// and upgrade's ListModules).
type Modules interface {
	// PutModule stores a module. Storing the same hash again is not an
	// error: it replaces the module's Env and makes it the newest.
	PutModule(ctx context.Context, m Module) error
	// GetModule returns a module with its bytes, or ErrNotFound.
	GetModule(ctx context.Context, hash string) (Module, error)
	// ListModules returns every module without its bytes, newest first.
	ListModules(ctx context.Context) ([]ModuleInfo, error)
	// ModuleFor returns the hash of the most recently deployed module that
	// registers the orchestration name, or ErrNotFound.
	ModuleFor(ctx context.Context, orchestration string) (string, error)
	// DeleteModule deletes a module no instance runs on (none at all,
	// finished ones included: their history was made by it). ModuleFor
	// then names the newest module left that registers each of its
	// orchestrations. It returns ErrNotFound, or ErrModuleInUse if
	// instances run on it.
	DeleteModule(ctx context.Context, hash string) error
	// ModulesWithWork returns, sorted, the hashes of the modules that run
	// the instances with messages waiting (due or not) or activity tasks
	// waiting: the modules a starting host will need, which it can load
	// before it takes any work.
	ModulesWithWork(ctx context.Context) ([]string, error)
}

// Instances keeps the instances and their histories. Host.Start calls
// CreateInstance; the turn reads a history it does not hold in memory
// (History, in Host.fresh); the server's reads and the operations call
// the rest.
type Instances interface {
	// CreateInstance creates a Pending instance and enqueues its
	// OrchestrationStarted message, atomically. It returns ErrInstanceExists
	// if the id is taken.
	CreateInstance(ctx context.Context, n NewInstance) error
	// CreateWithEvent is signal with start: it creates the instance n as
	// CreateInstance does, with ev (an ExternalEvent or, with max > 0, an
	// ExternalEventPersistent) after its start, or, when the id is taken,
	// enqueues ev for the instance there under the rules of Enqueue and
	// EnqueuePersistent (ErrFinished, ErrTooManyEvents), atomically. It
	// reports whether it created the instance.
	CreateWithEvent(ctx context.Context, n NewInstance, ev engine.Event, max int) (created bool, err error)
	// GetInstance returns an instance, or ErrNotFound.
	GetInstance(ctx context.Context, id string) (Instance, error)
	// Attributes returns the search attributes of an instance, in the
	// order of their names: none when it has none (or does not exist).
	Attributes(ctx context.Context, id string) ([]abi.Attribute, error)
	// ListInstances returns a page of the instances q.Filter selects,
	// newest first, or ErrBadCursor.
	ListInstances(ctx context.Context, q InstanceQuery) (InstancePage, error)
	// CountInstances counts the instances f selects, per module and
	// status; a pair with none is left out.
	CountInstances(ctx context.Context, f InstanceFilter) ([]InstanceCount, error)
	// History returns the history of one execution of an instance (0 means
	// the current one; an execution that has not begun has none). It
	// returns ErrNotFound if the instance does not exist, or if the
	// execution does not (past the current one) or is no longer kept
	// (DeleteExecutions).
	History(ctx context.Context, id string, execution int64) ([]engine.Event, error)
	// Executions describes the executions of an instance whose history is
	// kept, oldest first; the current one is always among them. It
	// returns ErrNotFound if the instance does not exist.
	Executions(ctx context.Context, id string) ([]Execution, error)
	// Waits returns the waits the last turn of an instance kept
	// (TurnCommit.Waits), or ErrNotFound; none once an execution ended
	// or was reset, until its next turn.
	Waits(ctx context.Context, id string) ([]engine.Wait, error)
}

// Queue is the instances' messages and their turn locks: the turn's side
// of the store. The dispatcher locks work (LockNextInstances) and, when it
// finds none, asks when to look again (NextVisibleAt); a turn commits
// (CommitTurn) or gives the lock back (AbandonInstance) and asks whether
// more came meanwhile (HasWork); Host.Raise, Cancel and Terminate put
// messages in from outside (Enqueue, EnqueuePersistent); a starting host
// ends the locks and leases it left (ReleaseAllLeases).
type Queue interface {
	// Enqueue adds a message (an engine event, such as a raised
	// ExternalEvent) for an instance at now, visible at once, and with
	// audit, when not nil, the audit record of the request that asks for
	// it (AuditRecord; its ID is given), in the same transaction: a
	// message refused stores no record. It returns ErrNotFound if the
	// instance does not exist, or ErrFinished if it has finished.
	Enqueue(ctx context.Context, instanceID string, ev engine.Event, now time.Time, audit *AuditRecord) error
	// EnqueuePersistent is Enqueue for an ExternalEventPersistent, which it
	// refuses with ErrTooManyEvents when the events of that kind the
	// instance's current execution has taken (in its history) and has
	// waiting (messages) already number max: the engine would drop it.
	EnqueuePersistent(ctx context.Context, instanceID string, ev engine.Event, max int, now time.Time, audit *AuditRecord) error
	// RequestUpdate records the update u (its ID, Name and Input) of the
	// instance and enqueues its message (engine.UpdateRequest), atomically,
	// at now, and returns it, Requested; when the instance already has an
	// update of that ID, it returns that one, as it is, and enqueues
	// nothing. With start not nil, it is update with start: it first
	// creates the instance start (start.ID is instanceID), as
	// CreateInstance does, unless the id is taken, and reports whether it
	// did. It returns ErrNotFound if the instance does not exist, or
	// ErrFinished if it has finished (and has no update of that ID).
	RequestUpdate(ctx context.Context, start *NewInstance, instanceID string, u Update, now time.Time) (got Update, started bool, err error)
	// GetUpdate returns the instance's update of id, or ErrNotFound.
	GetUpdate(ctx context.Context, instanceID, id string) (Update, error)

	// LockNextInstances locks up to max instances (max ≥ 1) that have
	// visible messages (visible: due at or before now) and are not locked,
	// until now+lease: first those with visible messages other than their
	// start (instances that have begun), by their oldest such message;
	// then the others, by their start, in the fair order of starts: the
	// children one turn starts take consecutive ranks after the larger of
	// their parent's last child still waiting and the first start waiting,
	// any other start takes the first start's rank, and starts are served
	// by rank, then in the order they came, so that a parent's many
	// children take turns with the instances started after them. It passes over the instances that run on a module whose hash
	// skip holds, as if they had no messages: it neither locks them nor
	// counts a delivery, and the instances after them come up as if they
	// were not there (a host leaves them to a host that can run their
	// module). It returns none when there is none.
	LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*WorkItem, error)
	// HasWork reports whether the instance has messages visible at now
	// (due at or before it), locked or not.
	HasWork(ctx context.Context, id string, now time.Time) (bool, error)
	// CommitTurn commits a turn, unlocks the instance and resets its
	// Attempt count. It returns
	// ErrLeaseLost if the lock is no longer held.
	CommitTurn(ctx context.Context, c TurnCommit) error
	// AbandonInstance unlocks an instance without committing anything.
	AbandonInstance(ctx context.Context, id, lockToken string) error

	// NextVisibleAt returns the earliest time after now at which a message
	// or a retried activity task (RetryActivity) becomes visible or a lock
	// or lease expires, so a dispatcher knows when
	// to look again. Workers call it whenever they find no work, so it must
	// not cost more with a bigger backlog.
	NextVisibleAt(ctx context.Context, now time.Time) (time.Time, bool, error)

	// ReleaseAllLeases ends every lock and lease this host holds: all of
	// them in a store one host holds exclusively (store/sqlite), the
	// host's own in a store several hosts share (store/postgres). A host
	// calls it at start-up, so the work it left behind when it crashed is
	// picked up at once; other hosts' work waits for their leases to end.
	ReleaseAllLeases(ctx context.Context) error
}

// Activities is the activity tasks a turn queued (CommitTurn), leased to
// the host's activity workers, which take them (LockNextActivities), and
// to workers outside the host, which poll for them through the host's API
// (LockQueuedActivities); a worker keeps a task while an attempt runs
// long (ExtendLease, Heartbeat) and hands back each outcome
// (CompleteActivity).
type Activities interface {
	// LockNextActivities leases up to max (max ≥ 1) unleased activity
	// tasks of the host's own queue (engine.ActivityTask.Queue empty, the
	// activities that run in the module) until now+lease (store.LeaseFor),
	// or returns none when there is none. A task RetryActivity let go is
	// not leased before its visibleAt. It
	// leases fairly across instances: the tasks an instance schedules take
	// turns, one each, with the tasks of the others still waiting, in the
	// order each instance scheduled them, so that an instance that
	// schedules a thousand at once does not make one that schedules later
	// wait for all of them (storetest's ActivitiesFairAcrossInstances).
	// It passes over the tasks of modules whose hash skip holds, as
	// LockNextInstances does their instances.
	LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*ActivityWork, error)
	// LockQueuedActivities leases, as LockNextActivities does (fairly
	// across instances, within the queue), up to max unleased tasks of
	// the task queue p.Queue whose name p.Names holds (any, if it holds
	// none), for a worker outside the host. It refuses a poll p.Check
	// refuses.
	LockQueuedActivities(ctx context.Context, now time.Time, lease time.Duration, max int, p TaskPoll) ([]*ActivityWork, error)
	// ExtendLease extends w's lease to now+lease, so that an attempt that
	// runs longer than a lease is not handed to another worker meanwhile.
	// It returns ErrLeaseLost if the lease is no longer held. A lost
	// extension loses nothing: the lease is then as it was.
	ExtendLease(ctx context.Context, w *ActivityWork, now time.Time, lease time.Duration) error
	// Heartbeat is ExtendLease that also keeps details (JSON; nil keeps
	// those there) as the task's last heartbeat, which the next delivery
	// gets in ActivityWork.Heartbeat. Like a lease, it need not survive a
	// crash: a lost heartbeat leaves the one before it.
	Heartbeat(ctx context.Context, w *ActivityWork, details json.RawMessage, now time.Time, lease time.Duration) error
	// ActivityTasks describes up to max of the activity tasks of an
	// instance, oldest first, as they stand at now: for people (durabox
	// status, the dashboard), who want to know what it waits on.
	ActivityTasks(ctx context.Context, instanceID string, now time.Time, max int) ([]ActivityTaskInfo, error)
	// CompleteActivity removes a leased activity task and enqueues its result
	// (an ActivityCompleted or ActivityFailed event naming the task's
	// ScheduleID) as a message for its instance at now, atomically. It returns
	// ErrLeaseLost if the lease is no longer held. It need not wait until
	// the result would survive a power cut, or a crash: losing it (with
	// the task's removal) makes the activity run again, which
	// at-least-once allows. store/sqlite keeps it in memory until the
	// commit of the turn that takes it, which removes the task; whatever
	// a store does, the instance gets the result once, as a message, in
	// its place among the messages stored before and after it.
	CompleteActivity(ctx context.Context, w *ActivityWork, result engine.Event, now time.Time) error
	// RetryActivity lets go of a leased activity task whose attempt
	// failed with failure and whose retry policy allows another
	// (engine.RetryPolicy.Next), atomically: it counts the failure (the
	// task's next delivery has Failures one higher and LastFailure
	// failure), counts its deliveries anew (the next has Attempt 1), and
	// leaves it unleased, visible to LockNextActivities at visibleAt and
	// not before (NextVisibleAt names that time). Nothing reaches the
	// instance. It returns ErrLeaseLost if the lease is no longer held.
	// Like CompleteActivity, it need not wait until it would survive a
	// crash: losing it runs the failed attempt again.
	RetryActivity(ctx context.Context, w *ActivityWork, failure *engine.Failure, visibleAt time.Time) error
	// AwaitCompletion lets go of a leased activity task whose attempt
	// answered that its outcome comes from outside: the task waits, held
	// by nobody, for CompleteFromOutside with secret, until until; after
	// it, it is delivered again with Unanswered set. It returns an error
	// wrapping ErrLeaseLost if w's lease no longer holds the task.
	AwaitCompletion(ctx context.Context, w *ActivityWork, secret string, until time.Time) error
	// CompleteFromOutside removes the task id that waits to be completed
	// from outside with secret (AwaitCompletion), before its deadline,
	// and enqueues its result (naming the task's ScheduleID, which the
	// store sets) for its instance at now, atomically. It returns an
	// error wrapping ErrLeaseLost, saying why, when no task of that id
	// waits with that secret (it was completed, or its instance ended or
	// was purged) or its deadline has passed.
	CompleteFromOutside(ctx context.Context, id int64, secret string, result engine.Event, now time.Time) error
}

// Operations are the changes that are not turns, which
// host/internal/ops makes: purges and retention (Purge, PurgeInstances,
// DeleteExecutions), durabox upgrade (MoveInstance) and durabox reset
// (ResetInstance).
type Operations interface {
	// Purge deletes a finished instance (engine.Status.IsTerminal) with the
	// history of all its executions, its messages and its activity tasks, so
	// that its id can be used again; its children live on, reporting to
	// nobody. It returns ErrNotFinished if the instance has not finished,
	// or ErrNotFound if it does not exist.
	Purge(ctx context.Context, id string) error
	// PurgeInstances purges, as Purge does, up to max (max ≥ 1) of the
	// finished instances f selects (those that have not finished never
	// are), in any order, in one write, and returns their ids.
	PurgeInstances(ctx context.Context, f InstanceFilter, max int) ([]string, error)
	// DeleteExecutions deletes the history of up to max (max ≥ 1) of the
	// executions that continued as new before before, those that ended
	// first first, in one write, and returns how many. The instances and
	// their current executions stay.
	DeleteExecutions(ctx context.Context, before time.Time, max int) (int, error)

	// MoveInstance moves an instance to another module, with its activity
	// tasks that no worker holds, and appends the move to its history,
	// atomically, as Move describes. It returns
	// ErrBusy while a turn holds the instance, ErrChanged when the instance
	// is not as m expects, ErrNotFound if the instance or m.To does not
	// exist; then nothing changed. A turn lock that has expired does not
	// hold the instance: the move ends it, so the late commit of its turn
	// fails with ErrLeaseLost.
	MoveInstance(ctx context.Context, m Move) error
	// ResetInstance starts the new execution Reset describes, atomically:
	// the instance becomes Running in the next execution, on r.Module,
	// with history r.Kept, its custom status r.CustomStatus, and as its
	// messages r.Marker first, then the reports of the children in flight
	// that have ended, then r.Raise, then the messages of the old
	// execution that are not completions (which named its events), then
	// the timers in flight (visible when due); the activity tasks in flight
	// are queued on r.Module. The old execution's activity tasks not yet
	// leased are dropped, and the results of those leased go to nobody;
	// its history stays, readable by its number. It returns ErrBusy,
	// ErrChanged or ErrNotFound as MoveInstance does; then nothing
	// changed.
	ResetInstance(ctx context.Context, r Reset) error
}

// Health is what people and probes read of the store: the host's
// readiness check (Ping) and the queue's figures for durabox status and
// the metrics (QueueStats).
type Health interface {
	// Ping reads from the storage itself, cheaply, and returns why it
	// could not: for a host's readiness check. It fails once the store is
	// closed.
	Ping(ctx context.Context) error

	// QueueStats describes the work waiting at now. It reads every waiting
	// message: it is for people, not for dispatchers.
	QueueStats(ctx context.Context, now time.Time) (QueueStats, error)
}
