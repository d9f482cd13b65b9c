package engine

import (
	"encoding/json"
	"time"

	"github.com/durabox/durabox/abi"
)

// ActivityTask is work the caller must hand to an activity worker once the
// turn is persisted.
type ActivityTask struct {
	// ScheduleID is the ActivityScheduled event's ID; the activity's result
	// comes back as a message naming it.
	ScheduleID int64
	Name       string
	Input      json.RawMessage
	// Timeout is the deadline of each attempt the orchestration set for
	// this call; zero leaves it to the host.
	Timeout time.Duration
	// Queue is the task queue the orchestration named for this call:
	// empty runs it in the module, in the host; a name gives it to the
	// workers that serve that queue.
	Queue string
	// HeartbeatTimeout is how long an attempt may go without a heartbeat
	// before it counts as failed; zero asks for no heartbeat.
	HeartbeatTimeout time.Duration
	// Retry is how the host retries a failed attempt (RetryPolicy.Next);
	// nil: one attempt.
	Retry *RetryPolicy
}

// activityTask is the task an ActivityScheduled event asks for.
func activityTask(ev *Event) ActivityTask {
	return ActivityTask{ScheduleID: ev.ID, Name: ev.Name, Input: ev.Input, Timeout: time.Duration(ev.TimeoutMs) * time.Millisecond,
		Queue: ev.TaskQueue, HeartbeatTimeout: time.Duration(ev.HeartbeatTimeoutMs) * time.Millisecond, Retry: ev.Retry}
}

// ChildTask is a child instance the caller must start, in the same commit,
// on the module that registers Name (preferring the parent's). Unless
// Detached, its end comes back as a SubOrchestrationCompleted or
// SubOrchestrationFailed message naming ScheduleID.
//
// InstanceID is the id the orchestration chose for it, or else one derived
// as PARENT~EXECUTION:EVENT: the parent's id, TurnInput.Execution and
// ScheduleID ("order-7~1:2"). A derived id is unique across the parent's
// executions and resets, and never one a user or an orchestration can
// choose (abi.CheckInstanceID), which never holds '~'.
type ChildTask struct {
	ScheduleID int64
	InstanceID string
	Name       string
	Input      json.RawMessage
	Detached   bool
}

// RaiseTask is an event the orchestration raised at another instance (or
// itself) that the caller must deliver with the turn's commit: the target
// InstanceID gets Message, and the sender, in the same commit, Delivered
// or, when the target does not exist, has finished or takes no more
// persistent events, NotDelivered.
type RaiseTask struct {
	ScheduleID int64
	InstanceID string
	Name       string
	Data       json.RawMessage
	Persistent bool
}

// TimerTask is a timer the caller must fire, as a TimerFired message naming
// ScheduleID, once FireAt has passed.
type TimerTask struct {
	ScheduleID int64
	FireAt     time.Time
}

// TurnInput is what one turn consumes.
type TurnInput struct {
	// History is the execution's persisted history, in order. It must
	// extend the history this Execution applied in earlier turns.
	History []Event
	// Messages are new events for the instance, oldest first, whose ID and
	// Time are not assigned yet: an OrchestrationStarted, completions
	// (ActivityCompleted, ActivityFailed, TimerFired) naming a ScheduleID,
	// raised events (ExternalEvent, ExternalEventPersistent) with a Name
	// and their data in Result, and requests from outside
	// (OrchestrationCancelRequested, OrchestrationTerminated) with a
	// Reason, and updates (UpdateAccepted, with the UpdateID, Name and
	// Input a client sent). The engine binds an ExternalEvent to the oldest active wait of
	// its name, or drops it if there is none. In the first turn of a reset
	// execution, an ExecutionReset comes first (see the package doc,
	// "Markers").
	Messages []Event
	// Now is the time of the turn; new events are recorded at it.
	Now time.Time
	// Execution is the number of the execution History belongs to: 1 for
	// an instance's first, one more for each continue-as-new and each
	// reset, never used twice for one instance. The ids of the children
	// the turn starts without an id of their own derive from it (see
	// ChildTask). Zero counts as 1.
	Execution int64
	// MaxPersistentEvents is how many persistent events the execution
	// takes: one past them is dropped, and continue-as-new carries the
	// newest that many. It is the caller's setting, the same for every
	// turn of an instance; it decides what arrives, never what a replay
	// does. Zero means MaxPersistentEvents, the constant.
	MaxPersistentEvents int
	// HistoryWarning is the length of history, in events, past which an
	// orchestration is told to continue as new: the engine records it in
	// the OrchestrationStarted of an execution it starts
	// (Event.HistoryWarning), and from there, not from here, tells each
	// step of the execution, live and on replay. Zero records nothing:
	// the execution is never told.
	HistoryWarning int64
}

// TurnResult is what one turn produces. The caller must persist NewEvents,
// the tasks and the status atomically, together with the removal of every
// message it passed in (applied or dropped), before dispatching any task.
type TurnResult struct {
	// NewEvents extend the history, with IDs continuing it.
	NewEvents  []Event
	Activities []ActivityTask
	Timers     []TimerTask
	Children   []ChildTask
	// Raises are the events the turn raised at instances.
	Raises []RaiseTask
	// CustomStatus, when set, is the custom status the orchestration set
	// last in this turn.
	CustomStatus *string
	// Attributes are the search attributes the turn set or removed (a
	// removed one has no type), the last of each name, by name.
	Attributes []abi.Attribute
	// CancelChildren are the child instances whose cancellation this turn
	// requested: the caller must send each an OrchestrationCancelRequested.
	CancelChildren []string
	// TerminateChildren are the children still running when this turn
	// terminated the instance: the caller must send each an
	// OrchestrationTerminated.
	TerminateChildren []string
	// Status is the instance's status after the turn. When it is
	// StatusTerminated, nothing the execution still waits for matters: the
	// caller may drop its activity tasks not yet started and its timers.
	Status Status
	// Result is the orchestration's output once Status is Completed.
	Result json.RawMessage
	// Failure is why the orchestration failed once Status is Failed (or
	// Canceled, or Terminated).
	Failure *Failure
	// Err is the cause when the engine itself failed the instance: a
	// *NondeterminismError, or the guest's crash. Nil otherwise.
	Err error
	// Dropped lists messages that were consumed without being applied, and
	// the persistent events not carried to the next execution because it
	// would take more than MaxPersistentEvents.
	Dropped []Dropped
	// ContinueAsNew is set when the execution continued as new (Status
	// StatusContinuedAsNew): the caller starts the next execution, in the
	// same commit, with Started followed by the Carried messages as its
	// first messages, and after them the messages the ended execution left
	// unconsumed that OutlivesExecution keeps.
	ContinueAsNew *ContinueAsNew
	// WaitingOn are the kinds of what the execution waits on after the
	// turn, and Waits the first MaxWaits of its waits beside its activity
	// calls (Execution.Waiting); both nil once it ended.
	WaitingOn []WaitKind
	Waits     []Wait
	// Rejected is set when the turn ended because the orchestration
	// refused an update: the turn must not be committed. Its guest and
	// this Execution have applied the refused update, which history will
	// never hold, so neither may run again: the caller records the
	// refusal, consumes the update's message, and runs the turn again
	// without it on a fresh guest and Execution that replay the history.
	Rejected *UpdateRejection
}

// UpdateRejection is an update the orchestration refused: its validator
// refused it, or the orchestration has no handler of its name.
type UpdateRejection struct {
	// Message is the index, in TurnInput.Messages, of the update's
	// message.
	Message int
	// UpdateID and Name are the update's; Failure says why it was refused.
	UpdateID, Name string
	Failure        *Failure
}

// ContinueAsNew is how the next execution of an instance starts.
type ContinueAsNew struct {
	Input json.RawMessage
	// Started is the next execution's first message: the
	// OrchestrationStarted of Input (StartMessage).
	Started Event
	// Carried are the messages the next execution gets: the persistent
	// events (ExternalEventPersistent) that no wait took, in the order they
	// arrived in, then the messages of the turn that came after the
	// execution ended and belong to the instance (persistent events,
	// requests to cancel or terminate it), in order. Of the persistent
	// events, the newest MaxPersistentEvents: the older ones are in
	// Dropped.
	Carried []Event
}

// Dropped is a message the engine consumed without applying, and why.
type Dropped struct {
	Message Event
	Reason  string
}

// open is an operation scheduled in history and not yet completed.
type open struct {
	seq  uint64
	kind EventKind
	// name is the name of the activity, the wait's event or the child's
	// orchestration; at is the time of its schedule event, and due, for
	// a timer, when it comes due.
	name    string
	at, due time.Time
}

// acceptedUpdate is an update the execution accepted: its name, when it was
// accepted, and whether its handler has yet to answer.
type acceptedUpdate struct {
	name string
	at   time.Time
	open bool
}

// MaxPersistentEvents is how many persistent events one execution takes
// unless the caller sets another limit (TurnInput.MaxPersistentEvents);
// more are dropped. A host refuses to raise an event past it: the
// execution's persistent events taken and waiting must stay within it.
// Continue-as-new carries the newest MaxPersistentEvents untaken ones to
// the next execution.
const MaxPersistentEvents = 20

// DefaultHistoryWarning is the history warning a host uses unless it is
// told otherwise (TurnInput.HistoryWarning; durabox serve
// --history-warning): 50,000 events.
const DefaultHistoryWarning = 50000

// Execution is the engine's side of one execution of an orchestration
// instance, which a live guest (one wasm instance of its module) applies
// alongside it: the two advance together, turn by turn, the caller handing
// each activation a Turn asks for to the guest and the guest's commands back
// (see Turn). Keep both between turns so that a turn costs the new events
// only; a fresh Execution with a fresh guest replays the whole history and
// reaches the identical state.
//
// An Execution is not safe for concurrent use.
type Execution struct {
	// instanceID and name come from OrchestrationStarted; children without
	// an id of their own are named after the instance. children maps each
	// child's schedule event to its instance id.
	instanceID, name string
	children         map[int64]string
	// cancelRequested is set once an OrchestrationCancelRequested applied.
	cancelRequested bool
	// applied counts the history events applied so far; lastID is the ID of
	// the last one.
	applied int
	lastID  int64
	// size is the bytes of payload of the events applied so far
	// (payloadSize); warning is the HistoryWarning of the execution's
	// OrchestrationStarted.
	size, warning int64
	// pending are emitted commands not yet matched to history, oldest first.
	pending []emitted
	// nextSeq is the sequence number the guest's next command must carry.
	nextSeq uint64
	// attributes are the names of the search attributes the execution's
	// SetAttributes commands have set and not removed, for the limit
	// abi.MaxAttributes.
	attributes map[string]bool
	// open holds the operations scheduled and not yet answered or
	// cancelled, by schedule event (opened, closed); waitCount counts
	// those that are waits by kind, and others holds the schedule events
	// of the waits that are not activity calls, in the order they were
	// scheduled, so that what a turn reports the execution waits on
	// (Waiting) costs the same beside a fan-out of 100,000 activities as
	// beside one.
	open      map[int64]open
	waitCount map[WaitKind]int
	others    []int64
	// scheduled maps the sequence number of each command that started an
	// operation to its schedule event; cancelled holds the schedule events
	// of operations cancelled before they completed.
	scheduled map[uint64]int64
	cancelled map[int64]bool
	// waits are the positional waits of each name in history order; the
	// matched and cancelled ones at the front are dropped when an event
	// is bound, so that binding costs the same after a million events as
	// after one (issue 35: a scan of every wait the execution ever made,
	// for each event, made 100,000 events cost twice as much each).
	waits map[string][]int64
	// mailbox holds the persistent events not yet taken, and persistentWaits
	// the persistent waits not yet served, per name, oldest first;
	// persistentEvents counts the persistent events taken in.
	mailbox          map[string][]Event
	persistentWaits  map[string][]int64
	persistentEvents int
	// serve holds the history indices of the persistent waits bound and
	// not yet served (serveWaits): empty but while a step's commands are
	// being bound.
	serve   []int
	status  Status
	result  json.RawMessage
	failure *Failure
	// updates holds the updates the execution accepted, by id, and
	// openUpdates the ids of those whose handlers have not answered, in
	// order. updatable is what the guest's last answer said of whether an
	// update could wake it (abi.ActivationResult.HandlesUpdates).
	updates     map[string]acceptedUpdate
	openUpdates []string
	updatable   bool
	// broken is set once a turn failed the instance from the engine's side,
	// or ended refusing an update (errRejected).
	broken error
}

// NewExecution returns an Execution that has applied nothing, for a fresh
// guest: one that has applied no activation yet.
func NewExecution() *Execution {
	return &Execution{
		nextSeq: 1, status: StatusPending,
		open: map[int64]open{}, waitCount: map[WaitKind]int{}, scheduled: map[uint64]int64{}, cancelled: map[int64]bool{}, children: map[int64]string{},
		mailbox: map[string][]Event{}, persistentWaits: map[string][]int64{}, waits: map[string][]int64{}, updates: map[string]acceptedUpdate{},
	}
}

// Status returns the status reached so far.
func (x *Execution) Status() Status { return x.status }
