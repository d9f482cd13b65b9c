package abi

import "slices"

// JobKind says what a Job asks the guest to apply.
type JobKind uint8

// The kinds of job in ABI version 1.
const (
	// JobStart starts the orchestration Name with Input. It is the first job
	// an instance ever receives, and it is received once.
	JobStart JobKind = 1
	// JobResolveActivity resolves the future of command Seq (a
	// ScheduleActivity) with Result, or with Failure if it is set.
	JobResolveActivity JobKind = 2
	// JobFireTimer resolves the future of command Seq (a StartTimer).
	JobFireTimer JobKind = 3
	// JobResolveEvent resolves the future of command Seq (a WaitEvent or
	// WaitEventPersistent) with the event's data in Result.
	JobResolveEvent JobKind = 4
	// JobResolveChild resolves the future of command Seq (a StartChild)
	// with the child's Result, or with Failure if it is set.
	JobResolveChild JobKind = 5
	// JobCancel asks the orchestration to stop, for the reason in Name: the
	// guest cancels every operation it is waiting on (with cancel commands)
	// and fails their futures; the orchestration may still clean up.
	JobCancel JobKind = 6
	// JobResolveRaise resolves the future of command Seq (a Raise): with
	// nothing when the event was delivered, with Failure, saying why, when
	// it was not.
	JobResolveRaise JobKind = 7
	// JobUpdate delivers the update UpdateID: a client asks the handler
	// the orchestration registered for the update Name to run with Input.
	// The guest runs the handler's validator, if it has one, first: when
	// it refuses, the guest answers with a single CommandRejectUpdate, and
	// the host then records nothing of the update (see ABI.md, "Updates");
	// else it runs the handler, whose answer it gives with
	// CommandCompleteUpdate.
	JobUpdate JobKind = 8
)

// Activation is one step of the host driving a guest: the jobs to apply, in
// history order, at one logical time.
type Activation struct {
	// Time is the logical time of the history event being applied, in Unix
	// nanoseconds. The guest's wall clock reads this value.
	Time int64
	// Replaying is true while the host replays events that were already
	// persisted. It is always encoded, so that an activation is the same
	// size live and on replay, and it is the only field whose value differs
	// between the two: a guest must do the same work whatever it says
	// (ABI.md), and the host drops the guest's output while it is set.
	Replaying bool
	// Jobs to apply, in order.
	Jobs []Job
	// HistoryLength is the number of events of the execution's history
	// the orchestration has applied, this activation's included, and
	// HistorySize the bytes of payload they carry (names, inputs,
	// results, failures, texts). Both are worked out from history, so a
	// step's replays are told what its first run was.
	HistoryLength, HistorySize uint64
	// ContinueAsNewSuggested is set once HistoryLength is past the host's
	// history warning (durabox serve --history-warning) as it stood when
	// the execution started: the orchestration should continue as new.
	ContinueAsNewSuggested bool
	// Patches are the change ids of the patch markers history records for
	// this step (see CommandPatch), set when Replaying. They are not part
	// of the encoded activation, which is the same size live and on
	// replay: a wasm guest asks the host (ImportPatched), which answers
	// with Patched; the test kit's native runtime reads them here.
	Patches []string
}

// Patched reports whether a guest applying a's step takes the new code path
// of the change id, the first time it asks in an execution (ABI.md,
// "Patches"): in a new step always, in a replayed one if the step's history
// records the change.
func (a *Activation) Patched(id string) bool {
	return !a.Replaying || slices.Contains(a.Patches, id)
}

// Job is one thing an activation asks the guest to apply. Which fields are
// meaningful depends on Kind.
type Job struct {
	Kind JobKind
	// Seq is the command sequence number the job resolves (resolve jobs).
	Seq uint64
	// Name is the orchestration name (JobStart), the reason (JobCancel)
	// or the update's name (JobUpdate).
	Name string
	// InstanceID is the orchestration instance's id (JobStart).
	InstanceID string
	// Input is the orchestration input as JSON (JobStart), or the update's
	// argument (JobUpdate).
	Input []byte
	// Result is the activity's result as JSON (JobResolveActivity).
	Result []byte
	// Failure, if set, resolves the future with an error instead of Result.
	Failure *Failure
	// UpdateID is the update's id, unique in the instance (JobUpdate).
	UpdateID string
	// Attempts is how many attempts the activity took, the last one
	// included, when its call had a retry policy (Command.Retry); zero when
	// it had none (JobResolveActivity).
	Attempts uint32
}

// CommandKind says what a Command asks the host to do.
type CommandKind uint8

// The kinds of command in ABI version 1.
const (
	// CommandScheduleActivity schedules activity Name with Input.
	CommandScheduleActivity CommandKind = 1
	// CommandStartTimer starts a durable timer that fires Delay nanoseconds
	// after the activation's logical time.
	CommandStartTimer CommandKind = 2
	// CommandComplete completes the orchestration with Output.
	CommandComplete CommandKind = 3
	// CommandFail fails the orchestration with Failure.
	CommandFail CommandKind = 4
	// CommandCancelTimer cancels the timer started by command Target: it
	// will not fire.
	CommandCancelTimer CommandKind = 5
	// CommandCancelActivity requests the cancellation of the activity
	// scheduled by command Target: its result, if it comes, is ignored.
	CommandCancelActivity CommandKind = 6
	// CommandWaitEvent waits for the next external event called Name raised
	// while the wait is active (positional: the Nth raise pairs with the Nth
	// active wait).
	CommandWaitEvent CommandKind = 7
	// CommandWaitEventPersistent takes the oldest unconsumed persistent
	// event called Name, waiting for one if there is none.
	CommandWaitEventPersistent CommandKind = 8
	// CommandCancelWait cancels the wait of command Target.
	CommandCancelWait CommandKind = 9
	// CommandContinueAsNew ends the execution and starts a new one of the
	// same orchestration with Output as its input.
	CommandContinueAsNew CommandKind = 10
	// CommandStartChild starts the orchestration Name with Input as a child
	// instance (InstanceID, or one the host derives when empty). Unless
	// Detached, the child's result resolves the command's future.
	CommandStartChild CommandKind = 11
	// CommandCancelChild requests the cancellation of the child started by
	// command Target: its result, if it comes, is ignored.
	CommandCancelChild CommandKind = 12
	// CommandSetCustomStatus sets the instance's custom status to Name,
	// which clients read.
	CommandSetCustomStatus CommandKind = 13
	// CommandPatch records that the orchestration took the new code path
	// of change Name: the guest emits it the first time it asks about the
	// change in an execution and the answer (Activation.Patched) is true.
	CommandPatch CommandKind = 14
	// CommandRaise raises the event Name with data Input (JSON) at the
	// instance InstanceID, persistent if Persistent. The host delivers it
	// with the turn's commit, exactly once, and tells the guest whether it
	// was delivered (JobResolveRaise).
	CommandRaise CommandKind = 15
	// CommandCompleteUpdate answers the update UpdateID, which the
	// instance accepted (JobUpdate): with Output, the handler's answer as
	// JSON, or with Failure, its error. Each accepted update is answered
	// once.
	CommandCompleteUpdate CommandKind = 16
	// CommandRejectUpdate refuses the update UpdateID, for the reason in
	// Failure: its validator refused it, or the instance has no handler
	// of its name. It is the only command of the activation that
	// delivered the update, and the host records nothing of it: the
	// update leaves no trace in history.
	CommandRejectUpdate CommandKind = 17
	// CommandSetAttributes sets or removes search attributes of the
	// instance: Input is their JSON (EncodeAttributes), each name to its
	// typed value or null to remove it. The host writes them with the
	// turn's commit, indexed for list filters.
	CommandSetAttributes CommandKind = 18
)

// Command is one decision the guest's orchestration code made. Commands that
// start work carry a Seq: the guest numbers them 1, 2, 3, … in emission
// order within one execution, and later jobs name that number.
type Command struct {
	Kind CommandKind
	Seq  uint64
	// Name is the activity name (CommandScheduleActivity), the event name
	// (CommandWaitEvent, CommandWaitEventPersistent), the orchestration
	// name (CommandStartChild), the status text (CommandSetCustomStatus),
	// the change id (CommandPatch) or the event name (CommandRaise).
	Name string
	// Input is the activity input as JSON (CommandScheduleActivity), the
	// child's input (CommandStartChild), the event's data (CommandRaise)
	// or the search attributes (CommandSetAttributes).
	Input []byte
	// Delay is the timer's duration in nanoseconds (CommandStartTimer).
	Delay int64
	// Output is the orchestration's result as JSON (CommandComplete), the
	// next execution's input (CommandContinueAsNew), or the update
	// handler's answer (CommandCompleteUpdate).
	Output []byte
	// Failure is why the orchestration failed (CommandFail), the update
	// handler's error (CommandCompleteUpdate), or why the update was
	// refused (CommandRejectUpdate).
	Failure *Failure
	// Target is the sequence number of the command a cancel command cancels.
	Target uint64
	// InstanceID is the child's instance id (CommandStartChild; empty lets
	// the host derive one), or the instance the event is for
	// (CommandRaise).
	InstanceID string
	// Detached starts a child nobody waits for (CommandStartChild).
	Detached bool
	// TimeoutMillis is the deadline, in milliseconds, of each attempt of
	// the activity (CommandScheduleActivity); zero leaves it to the host.
	TimeoutMillis uint64
	// Persistent raises a persistent event (CommandRaise).
	Persistent bool
	// UpdateID is the update the command answers (CommandCompleteUpdate,
	// CommandRejectUpdate).
	UpdateID string
	// TaskQueue is the task queue of the activity's tasks
	// (CommandScheduleActivity): empty runs it in the module, in the host;
	// a name gives it to the workers that serve that queue.
	TaskQueue string
	// HeartbeatTimeoutMillis is how long, in milliseconds, an attempt of
	// the activity may go without a heartbeat before the host counts it as
	// failed and delivers the task again (CommandScheduleActivity); zero
	// asks for no heartbeat.
	HeartbeatTimeoutMillis uint64
	// Retry, if set, is how the host retries a failed attempt of the
	// activity (CommandScheduleActivity): history records one outcome,
	// after the last attempt. Nil: one attempt.
	Retry *RetryPolicy
}

// RetryPolicy says how the host retries an activity call whose attempt
// failed: after the nth failed attempt it waits
// min(InitialIntervalMillis × coefficientⁿ⁻¹, MaximumIntervalMillis)
// and delivers the task again, until an attempt succeeds, MaximumAttempts
// have been made, or a failure's type is one of NonRetryable.
type RetryPolicy struct {
	// MaximumAttempts is how many attempts at most, the first included;
	// 0 or 1: one.
	MaximumAttempts uint32
	// InitialIntervalMillis is the wait, in milliseconds, between a failed
	// first attempt and the second; zero: none.
	InitialIntervalMillis uint64
	// BackoffThousandths is what each wait multiplies the one before by,
	// in thousandths (2000 doubles it); zero means 2000; otherwise at least
	// 1000.
	BackoffThousandths uint64
	// MaximumIntervalMillis caps each wait, in milliseconds; zero: no cap.
	MaximumIntervalMillis uint64
	// NonRetryable are the error types (Failure.Type) that end the call at
	// the first failure.
	NonRetryable []string
}

// ActivationResult is what the guest returns from an activation.
type ActivationResult struct {
	// HandlesUpdates is set while the orchestration has an update handler
	// registered and has not ended: an update can wake it, so the host
	// does not fail it as waiting on nothing when nothing else is open.
	HandlesUpdates bool
	Commands       []Command
}

// Failure describes an error raised by guest code.
type Failure struct {
	// Message is the error text a user sees.
	Message string
	// Details is extra diagnostic text, such as a panic's stack trace.
	Details string
	// Type is the error's type, a name the failing code chose: a retry
	// policy's NonRetryable lists the types it does not retry. Empty: none.
	Type string
}

// Manifest describes what a module registers.
type Manifest struct {
	// SDK names the guest SDK and its version, for diagnostics.
	SDK            string
	Orchestrations []string
	Activities     []string
	// Updates says that the module delivers updates (JobUpdate) to the
	// handlers its orchestrations register, refusing those they have none
	// for: a host refuses updates to the instances of a module without it,
	// which would take an update and never answer it.
	Updates bool
}

// ActivityRequest asks a guest to run one activity attempt.
type ActivityRequest struct {
	Name       string
	Input      []byte
	InstanceID string
	// Attempt counts the attempts of the call, from 1: each retry its
	// policy made and each delivery again (after a crash or a lost lease)
	// adds one.
	Attempt uint32
	// Heartbeat is the details of the last heartbeat an earlier attempt
	// of this call sent (JSON), if any.
	Heartbeat []byte
	// CompletionToken completes this attempt from outside, once it
	// answers Pending: whoever holds it completes or fails the call
	// before the attempt's deadline.
	CompletionToken string
}

// ActivityResult is the outcome of one activity attempt.
type ActivityResult struct {
	Output  []byte
	Failure *Failure
	// Pending says that the attempt's outcome comes from outside, by its
	// request's CompletionToken, before its deadline.
	Pending bool
}

// QueryRequest asks an orchestration instance's guest to answer one query
// from its state, without changing it.
type QueryRequest struct {
	Name  string
	Input []byte
}

// QueryResult is a guest's answer to a QueryRequest.
type QueryResult struct {
	Output  []byte
	Failure *Failure
	// Handlers are the names of the queries the instance handles, sorted.
	Handlers []string
	// UpdateHandlers are the names of the updates the instance handles,
	// sorted.
	UpdateHandlers []string
}
