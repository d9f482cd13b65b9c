// Package engine is Durabox's replay engine: a pure state machine that turns
// an execution's history and its new messages into a history delta, new work
// and the instance's status. It does no I/O, starts no goroutine and reads no
// clock: time arrives as recorded events and as TurnInput.Now.
//
// # The model
//
// History is a list of events, numbered from 1 without gaps. Schedule events
// record commands the orchestration emitted: ActivityScheduled,
// TimerCreated, ExternalSubscribed(Persistent), SubOrchestrationScheduled,
// OrchestrationChained, CustomStatusSet, AttributesSet, ExternalEventSent, UpdateCompleted, the cancellations (TimerCancelled,
// ActivityCancelRequested, ExternalSubscribedCancelled,
// SubOrchestrationCancelRequested) and the endings (OrchestrationCompleted,
// OrchestrationFailed, OrchestrationCanceled, OrchestrationContinuedAsNew).
// A Fail command is recorded as OrchestrationCanceled once a cancellation
// was requested (histories from before that kind have OrchestrationFailed
// there, and replay as they did: Canceled). Completion events
// (ActivityCompleted/Failed, TimerFired, SubOrchestrationCompleted/Failed,
// ExternalEvent, ExternalEventDelivered/NotDelivered) carry the ScheduleID of the schedule event they complete.
// ExternalEventPersistent, OrchestrationCancelRequested and UpdateAccepted
// carry information without completing anything. OrchestrationTerminated ends the execution
// from outside: the orchestration is not activated for it, its children
// still running are to be terminated too (TurnResult.TerminateChildren),
// and the instance ends StatusTerminated. PatchRecorded records a patch the
// orchestration took (see Patches); ModuleChanged and ExecutionReset are
// markers the host records (see Markers).
//
// The engine owns every rule about what a message means. A raised
// ExternalEvent is bound, as it arrives, to the oldest active wait of its
// name, and dropped if there is none (raised before its wait, or while its
// wait was cancelled); a persistent event waits in a mailbox (FIFO per name,
// at most MaxPersistentEvents per execution) for a persistent wait, and the
// ones no wait took are carried into the next execution on continue-as-new,
// in the order they arrived in (past MaxPersistentEvents, the newest). A
// persistent wait takes an event already waiting once every command of its
// step is recorded, so that a wait its own step cancels (the loser of a
// select between two waits whose events wait) takes none. A child started
// without an id of its own gets PARENT~EXECUTION:EVENT (see ChildTask).
// An event raised at an instance (ExternalEventSent) is work the caller
// delivers with the turn's commit (RaiseTask), telling the sender the
// outcome as a message, ExternalEventDelivered or ExternalEventNotDelivered:
// the raise is open until then, and cannot be cancelled.
// An update (UpdateAccepted, a message with its id, name and argument) is
// recorded and delivered to the guest, which either starts its handler,
// whose answer it gives later as a CompleteUpdate command (UpdateCompleted,
// compared on replay by id and answer), or refuses it with a lone
// RejectUpdate: then the turn ends with TurnResult.Rejected, which the
// caller must not commit, and the Execution is spent (see
// TurnResult.Rejected). An update id is taken once an execution, and the
// updates waiting when it continues as new go on to the next one. An
// orchestration whose guest says an update could wake it
// (abi.ActivationResult.HandlesUpdates) is not failed as waiting on
// nothing.
// A completion for a cancelled or completed operation is dropped. A request
// to cancel or terminate the instance, or a persistent event, that arrives
// in the turn that continues as new goes on to the next execution. A timer
// due after MaxTime (past 2262, where Unix nanoseconds overflow an int64)
// is due at MaxTime.
//
// The engine walks history in order. Each event that carries information to
// the orchestration (OrchestrationStarted, every completion) becomes one
// activation for the guest, stamped with the event's recorded time, which
// the turn asks its caller to hand over (Turn.Next); the commands the guest
// returns (Turn.Answer) queue up. The engine never calls the guest: the
// caller drives the turn, so that one turn reads top to bottom in the
// caller's loop. Each schedule event must match the oldest
// queued command (activities by name and input bytes, timers by position
// only); a missing, extra, reordered or changed command is a
// *NondeterminismError that shows both sides. When history runs out, each new
// message becomes an event, is applied, and the commands it causes become new
// schedule events right after it. So a history is exactly the transcript of
// activations and their commands, and one guest that applied it turn by turn
// is in the same state as a fresh guest that replays it all at once.
//
// # Patches
//
// Code that must differ between instances that ran old code and those that
// run new code asks whether it is patched (the guest SDK's Patched, like
// Temporal's GetVersion). The answer is a function of history, so replays
// repeat it:
//
//   - An activation that applies a persisted event carries, in Patches, the
//     change ids of the PatchRecorded events among the commands history
//     records for that step (the schedule events that follow the event,
//     past any marker). The guest is told true for those (a host answers
//     its patched import from them: they are not encoded, so that an
//     activation is the same bytes live and on replay).
//   - Any other change asked about in a replayed step is false: the step
//     ran before the change existed, and took the old path.
//   - In a new step every change is true. The guest emits a Patch command
//     the first time it answers true in an execution (it keeps its first
//     answer for the rest of the execution), recorded as PatchRecorded.
//   - A PatchRecorded that no emitted command matches is skipped: code that
//     dropped the question (keeping the new path) still replays histories
//     that recorded it. A Patch command matches only a PatchRecorded of the
//     same change.
//
// So a history that predates a patch replays on the patched code exactly
// (the upgrade gate finds it compatible), a new step takes the new path,
// and once no instance that took the old path is left, the question can go.
//
// # Markers: moves and resets
//
// The host records two events about an instance rather than about its
// orchestration; neither reaches the guest. ModuleChanged records a move to
// another module between two steps (durabox upgrade): nothing may be
// pending where it stands. ExecutionReset begins the rest of a reset
// execution: the host keeps a prefix of an execution's history (PlanReset
// says which prefixes can be kept, what is discarded, and the work to queue
// again), and the new execution's first turn gets the marker as its first
// message. That turn replays the kept events, but runs the last kept step as
// new (its activation is not replaying, so it takes new code paths and its
// log shows), records the marker, and after it the commands of that step. A
// later replay binds those commands across the marker.
//
// # Messages the caller delivers
//
// Some messages are made where only the caller's storage knows the facts:
// a new instance's first message, a child's report to the parent that
// still waits for it, the failure of a child whose id is taken, the timer
// that comes due, the messages an ended execution left unconsumed. The
// engine makes them all (StartMessage, Report, ChildNotStarted,
// ChildGone, TimerTask.Fired, ContinueAsNew.Started, OutlivesExecution),
// and GiveUp is the turn that fails an instance whose turn cannot run, so
// that a store only moves bytes and no store re-implements a rule.
//
// # Usage
//
//	x := engine.NewExecution() // and a fresh guest; keep both between turns
//	for {
//		history, messages := load()  // persisted history + new messages
//		t, err := x.Begin(engine.TurnInput{History: history, Messages: messages, Now: now()})
//		if errors.Is(err, engine.ErrStale) {
//			// replay on a fresh guest with a new Execution
//		}
//		for a := t.Next(); a != nil; a = t.Next() {
//			t.Answer(guest.Activate(a)) // the guest's commands, or its crash
//		}
//		res := t.Result()
//		// Persist atomically, BEFORE dispatching any task:
//		//   res.NewEvents appended to history, res.Activities and
//		//   res.Timers as work, res.Status (+Result/Failure), and the
//		//   removal of every message passed in (applied or dropped).
//		// If that commit fails, drop x: the guest is ahead of the store.
//	}
//
// # Caveats
//
// Messages that cannot apply are consumed and reported in TurnResult.Dropped:
// a completion for an operation already completed (an activity that ran twice
// after a crash), a message for a finished instance. A guest crash,
// nondeterminism, a command whose names or texts break the ABI's rule
// (abi.CheckName, abi.CheckText: checked as it arrives, so the same live
// and on replay, and never recorded), or a turn that leaves the
// orchestration running with no operation open (ErrWaitsOnNothing:
// nothing could ever wake it) fails the instance: the engine records an
// OrchestrationFailed event with the cause and reports it in
// TurnResult.Err. History is authoritative about how an
// execution ended. A cancellation is a request the orchestration sees: it
// ends Canceled (OrchestrationCanceled) only if the orchestration then
// fails; one that completes anyway is Completed.
//
// A persisted history no engine writes (it does not begin with
// OrchestrationStarted, its ids skip or repeat, events follow the end, an
// event is of an unknown kind or lacks what its kind requires: a failure's
// Failure, a TimerCreated's FireAt) is refused with ErrCorruptHistory
// before any of it is applied; PlanReset refuses to keep such events.
// CheckHistory checks a stored history without running it, for that and
// for a completion that names no schedule of its kind (durabox check-db). A
// message that lacks what its kind requires is dropped. An
// ExternalEvent in history must name an open wait of its name: the engine
// records an event only for an active wait, so one that does not is
// nondeterminism (UnmatchedCompletion), like any completion of nothing open.
//
// CONFORMANCE.md lists every rule of the reference documents Durabox was
// built from, the test that proves each, and where Durabox decides otherwise.
package engine
