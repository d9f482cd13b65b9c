package engine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
)

// Turn is one turn of an Execution: it applies the persisted events the
// guest has not seen (replaying them), then the new messages, and works
// out what the caller must persist. The caller drives it, handing each
// activation it asks for to the guest and the guest's answer back:
//
//	t, err := x.Begin(in)
//	for a := t.Next(); a != nil; a = t.Next() {
//		t.Answer(guest.Activate(a))
//	}
//	res := t.Result()
//
// The engine never calls the guest itself: the activations a turn asks for
// are a function of the history and the messages alone, so a guest that
// has applied events one turn at a time is in exactly the state of a fresh
// guest that replayed them all at once.
type Turn struct {
	x *Execution
	// persisted is the history the turn was given; the working history is
	// persisted followed by res.NewEvents, the events this turn records
	// (kept apart so that a turn costs its new events, not a copy of the
	// whole history).
	persisted []Event
	messages  []Event
	res       *TurnResult
	now       time.Time
	// next is the index of the first message not yet consumed.
	next int
	// liveFrom is the index of the first history event whose step is new:
	// the activations of the events before it replay steps whose commands
	// history holds. It is len(persisted), but in the first turn of a reset
	// execution, whose last kept step runs again (its commands were
	// discarded).
	liveFrom int
	// resetting is set in the first turn of a reset execution: its first
	// message is the ExecutionReset marker.
	resetting bool
	phase     phase
	// asked is the event whose activation Next returned and Answer has not
	// yet answered, or nil; askedReplaying says whether that activation
	// replays a persisted step.
	asked          *Event
	askedReplaying bool
	// err is what ended the turn early: it fails the instance.
	err error
	// execution is the number of the execution, from 1
	// (TurnInput.Execution).
	execution int64
	// maxPersistent is how many persistent events the execution takes
	// (TurnInput.MaxPersistentEvents).
	maxPersistent int
	// historyWarning is TurnInput.HistoryWarning.
	historyWarning int64
}

// phase is where a Turn is.
type phase int

const (
	// replaying the persisted history the guest has not applied.
	replaying phase = iota
	// recording the commands of the step just applied.
	flushing
	// taking the next message.
	taking
	// done: Result is ready.
	done
)

// historyLen is the length of the working history.
func (t *Turn) historyLen() int { return len(t.persisted) + len(t.res.NewEvents) }

// event returns the working history's event at index i.
func (t *Turn) event(i int) *Event {
	if i < len(t.persisted) {
		return &t.persisted[i]
	}
	return &t.res.NewEvents[i-len(t.persisted)]
}

// Begin begins a turn on in. An error means the input was unusable
// (ErrStale, ErrCorruptHistory) and nothing was applied from it; guest
// crashes, nondeterminism and an orchestration left waiting on nothing
// (ErrWaitsOnNothing) are not errors but fail the instance in the result.
func (x *Execution) Begin(in TurnInput) (*Turn, error) {
	if x.broken != nil {
		return nil, fmt.Errorf("engine: execution already failed: %w", x.broken)
	}
	if len(in.History) < x.applied || (x.applied > 0 && in.History[x.applied-1].ID != x.lastID) {
		return nil, ErrStale
	}
	if err := checkHistory(in.History, x.applied, x.lastID, x.status != StatusPending); err != nil {
		return nil, err
	}
	t := &Turn{x: x, persisted: in.History, messages: in.Messages, res: &TurnResult{}, now: in.Now, liveFrom: len(in.History), execution: max(in.Execution, 1),
		maxPersistent: cmp.Or(in.MaxPersistentEvents, MaxPersistentEvents), historyWarning: in.HistoryWarning}
	if len(in.Messages) > 0 && in.Messages[0].Kind == ExecutionReset && len(in.History) > 0 {
		// The first turn of a reset execution runs its last kept step
		// anew, which a guest that has applied it already cannot.
		if x.applied > 0 {
			return nil, ErrStale
		}
		t.resetting, t.liveFrom = true, len(in.History)-1
	}
	return t, nil
}

// Next returns the activation the guest must apply next, or nil once the
// turn is done. Each activation must be answered (Answer) before Next is
// called again.
func (t *Turn) Next() *abi.Activation {
	if t.asked != nil {
		panic("engine: Next called before the activation it returned was answered")
	}
	for t.phase != done {
		a, err := t.step()
		if err != nil {
			t.end(err)
			return nil
		}
		if a != nil {
			return a
		}
	}
	return nil
}

// AnswerResult gives the turn the guest's whole answer to the activation
// Next returned, or the error it crashed with: the commands, as Answer
// takes them, and whether an update could wake the orchestration.
func (t *Turn) AnswerResult(r *abi.ActivationResult, err error) {
	if err != nil || r == nil {
		t.Answer(nil, err)
		return
	}
	t.x.updatable = r.HandlesUpdates
	t.Answer(r.Commands, nil)
}

// Answer gives the turn the guest's answer to the activation Next
// returned: the commands it emitted, or the error it crashed with.
func (t *Turn) Answer(cmds []abi.Command, err error) {
	x, ev := t.x, t.asked
	if ev == nil {
		panic("engine: Answer called with no activation asked for")
	}
	t.asked = nil
	if err != nil {
		t.end(fmt.Errorf("orchestration crashed applying event %d: %w", ev.ID, err))
		return
	}
	for i := range cmds {
		if cmds[i].Kind == abi.CommandRejectUpdate {
			t.reject(ev, cmds, &cmds[i])
			return
		}
	}
	for _, c := range cmds {
		if c.Seq != x.nextSeq {
			t.end(fmt.Errorf("engine: the guest numbered a command %d where %d was next (a guest SDK bug)", c.Seq, x.nextSeq))
			return
		}
		if err := checkCommand(&c); err != nil {
			t.end(fmt.Errorf("engine: the orchestration's command %d is refused: %w", c.Seq, err))
			return
		}
		if err := x.countAttributes(&c); err != nil {
			t.end(fmt.Errorf("engine: the orchestration's command %d is refused: %w", c.Seq, err))
			return
		}
		x.nextSeq++
		x.pending = append(x.pending, emitted{cmd: c, at: ev.Time})
	}
}

// reject ends the turn on the guest's refusal, c, of the update ev
// delivered; cmds is the activation's whole answer.
func (t *Turn) reject(ev *Event, cmds []abi.Command, c *abi.Command) {
	switch {
	case ev.Kind != UpdateAccepted || len(cmds) != 1 || c.UpdateID != ev.UpdateID:
		t.end(fmt.Errorf("engine: the guest answered event %d, %s, with %s among %d commands: an update is refused by a RejectUpdate naming it, "+
			"the only command of the activation that delivered it (a guest SDK bug)", ev.ID, ev.String(), describeCommand(c), len(cmds)))
	case t.askedReplaying:
		t.end(&NondeterminismError{Code: RefusedUpdate, EventID: ev.ID, History: ev.String(), Emitted: describeCommand(c)})
	default:
		if err := checkCommand(c); err != nil {
			t.end(fmt.Errorf("engine: the orchestration's command %d is refused: %w", c.Seq, err))
			return
		}
		t.res.Rejected = &UpdateRejection{Message: t.next - 1, UpdateID: ev.UpdateID, Name: ev.Name, Failure: failureFrom(c.Failure)}
		t.x.broken = errRejected
		t.phase = done
	}
}

// errRejected is what breaks an Execution whose turn ended refusing an
// update (TurnResult.Rejected).
var errRejected = errors.New("its turn refused an update: the guest and the execution applied the update, which history does not hold")

// Result returns what the caller must persist, once Next has returned nil.
func (t *Turn) Result() *TurnResult {
	if t.phase != done {
		panic("engine: Result called before the turn was done")
	}
	return t.res
}

// step takes the turn one step further: up to the next activation it
// returns, or to a phase's end.
func (t *Turn) step() (*abi.Activation, error) {
	x := t.x
	if a, err := t.serveNext(); a != nil || err != nil {
		return a, err
	}
	switch t.phase {
	case replaying:
		if x.applied < t.historyLen() {
			return t.applyNext()
		}
		if t.resetting {
			// The kept history ends; the reset marker follows it, and the
			// commands of the last kept step, which the reset discarded,
			// follow the marker.
			t.next++
			t.record(t.messages[0])
			t.phase = flushing
			return t.applyNext()
		}
		// Every command of an activation is recorded right after it, so at
		// the end of persisted history nothing may be left unmatched.
		t.phase = taking
		return nil, t.checkNoPending(nil)
	case flushing:
		return t.flushNext()
	case taking:
		return t.take()
	}
	return nil, nil
}

// take applies the next message, if there is one, or ends the turn.
func (t *Turn) take() (*abi.Activation, error) {
	x := t.x
	if t.next == len(t.messages) {
		t.limitCarried()
		t.end(nil)
		return nil, nil
	}
	m := t.messages[t.next]
	t.next++
	switch {
	case x.status == StatusContinuedAsNew && carried(m.Kind):
		t.carry(m)
		return nil, nil
	case x.status == StatusContinuedAsNew:
		t.drop(m, "the execution continued as new")
		return nil, nil
	case x.status.IsTerminal():
		t.drop(m, fmt.Sprintf("the instance is already %s", x.status))
		return nil, nil
	}
	if reason := t.admit(&m); reason != "" {
		t.drop(m, reason)
		return nil, nil
	}
	t.record(m)
	t.phase = flushing
	return t.applyNext()
}

// end ends the turn: with err, failing the instance and dropping the
// messages not taken; without, failing an instance left running with
// nothing open.
func (t *Turn) end(err error) {
	x := t.x
	t.phase, t.asked = done, nil
	if err != nil {
		t.failInstance(err)
		for _, m := range t.messages[t.next:] {
			t.drop(m, "the instance failed")
		}
		t.next = len(t.messages)
	} else if x.status == StatusRunning && len(x.open) == 0 && !x.updatable {
		t.failInstance(ErrWaitsOnNothing)
	}
	t.res.Status, t.res.Result, t.res.Failure = x.status, x.result, x.failure
	if !x.status.ends() {
		t.res.WaitingOn, t.res.Waits = x.Waiting()
	}
}

// limitCarried keeps the persistent events carried to the next execution
// within the limit of one execution: the newest maxPersistent of them. The older ones are dropped, as the external-events reference says.
func (t *Turn) limitCarried() {
	c := t.res.ContinueAsNew
	if c == nil {
		return
	}
	over := -t.maxPersistent
	for _, m := range c.Carried {
		if m.Kind == ExternalEventPersistent {
			over++
		}
	}
	c.Carried = slices.DeleteFunc(c.Carried, func(m Event) bool {
		if over <= 0 || m.Kind != ExternalEventPersistent {
			return false
		}
		over--
		t.drop(m, fmt.Sprintf("the next execution takes %d persistent events, the limit, and this one is older than those it takes", t.maxPersistent))
		return true
	})
}

// admit returns why a message cannot be applied, or "" if it can.
func (t *Turn) admit(m *Event) string {
	x := t.x
	if what := m.lacks(); what != "" {
		return fmt.Sprintf("the %s has no %s", m.Kind, what)
	}
	switch m.Kind {
	case OrchestrationStarted:
		if x.status != StatusPending {
			return "the instance has already started"
		}
		return ""
	case ExternalEvent:
		waits := x.waits[m.Name]
		for ; len(waits) > 0; waits = waits[1:] {
			if o, ok := x.open[waits[0]]; ok && o.kind == ExternalSubscribed {
				x.waits[m.Name] = waits
				m.ScheduleID = waits[0]
				return ""
			}
		}
		delete(x.waits, m.Name)
		return fmt.Sprintf("no wait for event %q is active: an event raised before its wait, or while its wait was cancelled, is dropped", m.Name)
	case OrchestrationCancelRequested:
		if x.cancelRequested {
			return "cancellation was already requested"
		}
		return ""
	case OrchestrationTerminated:
		return ""
	case UpdateAccepted:
		if _, seen := x.updates[m.UpdateID]; seen {
			return fmt.Sprintf("update %q was already accepted by this execution", m.UpdateID)
		}
		return ""
	case ExternalEventPersistent:
		if x.persistentEvents >= t.maxPersistent {
			return fmt.Sprintf("the execution already took %d persistent events, the limit; persistent event %q is dropped", t.maxPersistent, m.Name)
		}
		return ""
	case ActivityCompleted, ActivityFailed, TimerFired, SubOrchestrationCompleted, SubOrchestrationFailed,
		ExternalEventDelivered, ExternalEventNotDelivered:
		if x.cancelled[m.ScheduleID] {
			return fmt.Sprintf("event %d was cancelled", m.ScheduleID)
		}
		o, ok := x.open[m.ScheduleID]
		if !ok {
			return fmt.Sprintf("event %d is not an open operation (a duplicate delivery, or it already completed)", m.ScheduleID)
		}
		if o.kind != scheduleKindOf(m.Kind) {
			return fmt.Sprintf("event %d is a %s, not a %s", m.ScheduleID, o.kind, scheduleKindOf(m.Kind))
		}
		return ""
	}
	return fmt.Sprintf("a %s cannot arrive as a message", m.Kind)
}

func (t *Turn) drop(m Event, reason string) {
	t.res.Dropped = append(t.res.Dropped, Dropped{Message: m, Reason: reason})
}

// record appends a new event to the working history and to the turn's
// output.
func (t *Turn) record(ev Event) {
	ev.ID, ev.Time = int64(t.historyLen())+1, t.now
	if ev.Kind == OrchestrationStarted {
		ev.HistoryWarning = t.historyWarning
	}
	if (ev.Kind == SubOrchestrationScheduled || ev.Kind == OrchestrationChained) && ev.InstanceID == "" {
		ev.InstanceID = childID(t.x.instanceID, t.execution, ev.ID)
	}
	t.res.NewEvents = append(t.res.NewEvents, ev)
	switch ev.Kind {
	case ActivityScheduled:
		t.res.Activities = append(t.res.Activities, activityTask(&ev))
	case TimerCreated:
		t.res.Timers = append(t.res.Timers, TimerTask{ScheduleID: ev.ID, FireAt: *ev.FireAt})
	case CustomStatusSet:
		t.res.CustomStatus = &ev.CustomStatus
	case AttributesSet:
		t.res.Attributes = MergeAttributes(t.res.Attributes, &ev)
	case SubOrchestrationCancelRequested:
		t.res.CancelChildren = append(t.res.CancelChildren, t.x.children[ev.ScheduleID])
	case SubOrchestrationScheduled, OrchestrationChained:
		t.res.Children = append(t.res.Children, ChildTask{ScheduleID: ev.ID, InstanceID: ev.InstanceID, Name: ev.Name, Input: ev.Input, Detached: ev.Kind == OrchestrationChained})
	case ExternalEventSent:
		t.res.Raises = append(t.res.Raises, RaiseTask{ScheduleID: ev.ID, InstanceID: ev.InstanceID, Name: ev.Name, Data: ev.Input, Persistent: ev.Persistent})
	case OrchestrationContinuedAsNew:
		// The persistent events no wait took go on to the next execution,
		// in the order they arrived in.
		t.res.ContinueAsNew = &ContinueAsNew{Input: ev.Input, Started: StartMessage(t.x.instanceID, t.x.name, ev.Input)}
		var untaken []Event
		for _, events := range t.x.mailbox {
			untaken = append(untaken, events...)
		}
		slices.SortFunc(untaken, func(a, b Event) int { return cmp.Compare(a.ID, b.ID) })
		for _, ev := range untaken {
			t.carry(Event{Kind: ExternalEventPersistent, Name: ev.Name, Result: ev.Result})
		}
	case OrchestrationTerminated:
		// Its children end with it; detached instances live on.
		for _, id := range slices.Sorted(maps.Keys(t.x.open)) {
			if t.x.open[id].kind == SubOrchestrationScheduled {
				t.res.TerminateChildren = append(t.res.TerminateChildren, t.x.children[id])
			}
		}
	}
}

// carried reports whether a message that arrives after its execution
// continued as new goes on to the next execution: persistent events,
// updates, and requests to cancel or terminate the instance, which are
// the instance's, not the execution's.
func carried(k EventKind) bool {
	return k == ExternalEventPersistent || k == UpdateAccepted || k == OrchestrationCancelRequested || k == OrchestrationTerminated
}

// carry hands a message on to the next execution.
func (t *Turn) carry(m Event) {
	c := t.res.ContinueAsNew
	c.Carried = append(c.Carried, m)
}

// flushNext records the oldest pending command as a new history event and
// applies it; when none is left, or the execution has ended (commands
// emitted after a terminal one are discarded), the turn goes on to the
// next message.
func (t *Turn) flushNext() (*abi.Activation, error) {
	x := t.x
	if len(x.pending) == 0 || x.status.ends() {
		x.pending = nil
		t.phase = taking
		return nil, nil
	}
	target, err := t.target(&x.pending[0].cmd)
	if err != nil {
		return nil, err
	}
	if err := checkChosenID(&x.pending[0].cmd); err != nil {
		return nil, err
	}
	if c := &x.pending[0].cmd; c.Kind == abi.CommandCompleteUpdate && !x.updates[c.UpdateID].open {
		return nil, fmt.Errorf("engine: the guest emitted %s, but %q is not an update the execution accepted and has not answered (a guest SDK bug)", describeCommand(c), c.UpdateID)
	}
	ev := eventFor(x.pending[0], target)
	if ev.Kind == OrchestrationFailed && x.cancelRequested {
		// The orchestration answers its cancellation: the history says so.
		ev.Kind = OrchestrationCanceled
	}
	t.record(ev)
	return t.applyNext()
}

// applyNext applies the first history event the guest has not seen, and
// returns the activation it asks of the guest, if any.
func (t *Turn) applyNext() (*abi.Activation, error) {
	x := t.x
	i := x.applied
	ev := t.event(i)
	x.applied, x.lastID = i+1, ev.ID
	x.size += payloadSize(ev)
	replaying := i < t.liveFrom
	switch {
	case ev.Kind == ExecutionReset:
		// The commands of the step before it are recorded after it.
		return nil, nil
	case ev.Kind == ModuleChanged:
		// A move happens between two steps.
		return nil, t.checkNoPending(ev)
	case ev.Kind == OrchestrationStarted:
		x.status, x.instanceID, x.name, x.warning = StatusRunning, ev.InstanceID, ev.Name, ev.HistoryWarning
		job := abi.Job{Kind: abi.JobStart, Name: ev.Name, InstanceID: ev.InstanceID, Input: ev.Input, Result: ev.Result}
		if ev.Failure != nil {
			job.Failure = failureTo(ev.Failure)
		}
		return t.activate(ev, replaying, job)
	case ev.isSchedule():
		return t.bind(i)
	}
	if err := t.checkNoPending(ev); err != nil {
		return nil, err
	}
	if ev.Kind == OrchestrationCancelRequested {
		x.cancelRequested = true
		return t.activate(ev, replaying, abi.Job{Kind: abi.JobCancel, Name: ev.Reason})
	}
	if ev.Kind == UpdateAccepted {
		x.accepted(ev.UpdateID, acceptedUpdate{name: ev.Name, at: ev.Time, open: true})
		return t.activate(ev, replaying, abi.Job{Kind: abi.JobUpdate, Name: ev.Name, Input: ev.Input, UpdateID: ev.UpdateID})
	}
	if ev.Kind == OrchestrationTerminated {
		// The orchestration is not told: it is over.
		x.status, x.result, x.failure = StatusTerminated, nil, terminated(ev.Reason)
		return nil, nil
	}
	if ev.Kind == ExternalEventPersistent {
		x.persistentEvents++
		x.mailbox[ev.Name] = append(x.mailbox[ev.Name], *ev)
		return t.deliverPersistent(ev, replaying)
	}
	// A completion must complete an operation this replay opened: an
	// ExternalEvent the wait of its own name (the engine records an event
	// only for an active wait, so one without is not what it wrote).
	o, ok := x.open[ev.ScheduleID]
	if !ok || o.kind != scheduleKindOf(ev.Kind) || (ev.Kind == ExternalEvent && o.name != ev.Name) {
		return nil, &NondeterminismError{Code: UnmatchedCompletion, EventID: ev.ID, History: ev.String()}
	}
	x.closed(ev.ScheduleID)
	job := abi.Job{Kind: abi.JobResolveActivity, Seq: o.seq, Result: ev.Result, Attempts: uint32(min(max(ev.Attempts, 0), math.MaxUint32))}
	switch ev.Kind {
	case ActivityFailed:
		job.Failure = failureTo(ev.Failure)
	case TimerFired:
		job = abi.Job{Kind: abi.JobFireTimer, Seq: o.seq}
	case ExternalEvent:
		job.Kind = abi.JobResolveEvent
	case SubOrchestrationCompleted:
		job.Kind = abi.JobResolveChild
	case SubOrchestrationFailed:
		job = abi.Job{Kind: abi.JobResolveChild, Seq: o.seq, Failure: failureTo(ev.Failure)}
	case ExternalEventDelivered:
		job = abi.Job{Kind: abi.JobResolveRaise, Seq: o.seq}
	case ExternalEventNotDelivered:
		job = abi.Job{Kind: abi.JobResolveRaise, Seq: o.seq, Failure: failureTo(ev.Failure)}
	}
	return t.activate(ev, replaying, job)
}

// deliverPersistent hands the oldest persistent event called ev.Name to the
// oldest persistent wait for it, if there are both, in an activation at
// ev, the event that made the pair possible: the event's arrival, or the
// wait (served once its step's commands are bound: serveNext).
func (t *Turn) deliverPersistent(ev *Event, replaying bool) (*abi.Activation, error) {
	x := t.x
	name := ev.Name
	if len(x.mailbox[name]) == 0 || len(x.persistentWaits[name]) == 0 {
		return nil, nil
	}
	data, wait := x.mailbox[name][0].Result, x.persistentWaits[name][0]
	x.mailbox[name], x.persistentWaits[name] = x.mailbox[name][1:], x.persistentWaits[name][1:]
	o := x.closed(wait)
	return t.activate(ev, replaying, abi.Job{Kind: abi.JobResolveEvent, Seq: o.seq, Result: data})
}

// serveNext hands a persistent wait the step bound the event waiting for it
// in the mailbox, once every command of the step is bound: a command after
// a wait, such as the cancellation of a wait that lost a Select to an
// earlier one, applies before any event is delivered, so that a cancelled
// wait takes none. The waits are served in the order they were bound, each
// still open in an activation at its event (as deliverPersistent says),
// one an activation: the commands the guest answers are bound before the
// next is served.
func (t *Turn) serveNext() (*abi.Activation, error) {
	x := t.x
	for len(x.pending) == 0 && len(x.serve) > 0 && !x.status.ends() {
		i := x.serve[0]
		x.serve = x.serve[1:]
		if _, open := x.open[t.event(i).ID]; !open {
			continue
		}
		if a, err := t.deliverPersistent(t.event(i), i < t.liveFrom); a != nil || err != nil {
			return a, err
		}
	}
	if x.status.ends() {
		x.serve = nil
	}
	return nil, nil
}

// bind matches the schedule event at history[i] with the oldest pending
// command.
func (t *Turn) bind(i int) (*abi.Activation, error) {
	x := t.x
	ev := t.event(i)
	if ev.IsTerminal() {
		x.status, x.result, x.failure = StatusCompleted, ev.Result, ev.Failure
		switch {
		case ev.Kind == OrchestrationCanceled, ev.Kind == OrchestrationFailed && x.cancelRequested:
			// OrchestrationFailed: as recorded before OrchestrationCanceled.
			x.status = StatusCanceled
		case ev.Kind == OrchestrationFailed:
			x.status = StatusFailed
		case ev.Kind == OrchestrationContinuedAsNew:
			x.status = StatusContinuedAsNew
		}
		// History is authoritative about how an execution ended: the host
		// itself records failures no command asked for (a guest crash).
		if len(x.pending) == 0 {
			return nil, nil
		}
	}
	if ev.Kind == PatchRecorded && (len(x.pending) == 0 || !matches(&x.pending[0].cmd, 0, ev)) {
		// The code no longer asks about this change: it was deprecated,
		// its new path kept.
		return nil, nil
	}
	if len(x.pending) == 0 {
		return nil, &NondeterminismError{Code: MissingCommand, EventID: ev.ID, History: ev.String()}
	}
	cmd := &x.pending[0].cmd
	target, err := t.target(cmd)
	if err != nil {
		return nil, err
	}
	if !matches(cmd, target, ev) {
		return nil, &NondeterminismError{Code: t.classify(cmd, target, i), EventID: ev.ID, History: ev.String(), Emitted: describeCommand(cmd)}
	}
	x.pending = x.pending[1:]
	switch ev.Kind {
	case ActivityScheduled, TimerCreated, ExternalSubscribed, ExternalSubscribedPersistent, SubOrchestrationScheduled, ExternalEventSent:
		o := open{seq: cmd.Seq, kind: ev.Kind, name: ev.Name, at: ev.Time}
		if ev.FireAt != nil {
			o.due = *ev.FireAt
		}
		x.opened(ev.ID, o)
		x.scheduled[cmd.Seq] = ev.ID
		switch ev.Kind {
		case SubOrchestrationScheduled:
			x.children[ev.ID] = ev.InstanceID
		case ExternalSubscribed:
			x.waits[ev.Name] = append(x.waits[ev.Name], ev.ID)
		case ExternalSubscribedPersistent:
			x.persistentWaits[ev.Name] = append(x.persistentWaits[ev.Name], ev.ID)
			x.serve = append(x.serve, i)
		}
	case UpdateCompleted:
		x.answered(ev.UpdateID)
	case TimerCancelled, ActivityCancelRequested, ExternalSubscribedCancelled, SubOrchestrationCancelRequested:
		if o := x.open[ev.ScheduleID]; o.kind == ExternalSubscribedPersistent {
			x.persistentWaits[o.name] = slices.DeleteFunc(x.persistentWaits[o.name], func(id int64) bool { return id == ev.ScheduleID })
		}
		x.closed(ev.ScheduleID)
		x.cancelled[ev.ScheduleID] = true
	}
	return nil, nil
}

// target returns the schedule event of the open operation a cancel command
// names (0 for other commands).
func (t *Turn) target(cmd *abi.Command) (int64, error) {
	if !isCancel(cmd) {
		return 0, nil
	}
	id, ok := t.x.scheduled[cmd.Target]
	want := cancellable(cmd)
	if o, open := t.x.open[id]; !ok || !open || !slices.Contains(want, o.kind) {
		return 0, fmt.Errorf("engine: the guest emitted %s, but command %d is not an open %s (a guest SDK bug)", describeCommand(cmd), cmd.Target, want[0])
	}
	return id, nil
}

// classify says how a command that does not match history[i] diverges.
func (t *Turn) classify(cmd *abi.Command, target int64, i int) NondeterminismCode {
	for j := i + 1; j < t.historyLen() && t.event(j).isSchedule(); j++ {
		if matches(cmd, target, t.event(j)) {
			return ReorderedCommand
		}
	}
	if t.event(i).IsTerminal() && cmd.Kind != abi.CommandComplete && cmd.Kind != abi.CommandFail && cmd.Kind != abi.CommandContinueAsNew {
		return ExtraCommand
	}
	return ChangedCommand
}

// checkNoPending fails when commands are left unmatched where history moves
// on to an event that is not a schedule event (ev), or ends (ev nil).
func (t *Turn) checkNoPending(ev *Event) error {
	x := t.x
	if len(x.pending) == 0 {
		return nil
	}
	e := &NondeterminismError{Code: ExtraCommand, EventID: x.lastID + 1, History: "nothing more", Emitted: describeCommand(&x.pending[0].cmd)}
	if ev != nil {
		e.EventID, e.History = ev.ID, ev.String()
	}
	return e
}

// activate returns the activation that hands job to the guest at ev, whose
// answer comes back through Answer. What it says of the history is what
// the guest has applied: the events up to the one that wakes it, and, for
// a persistent wait served after its step's commands (serveNext), those
// commands too; the same on every replay of the step as on its first run.
func (t *Turn) activate(ev *Event, replaying bool, job abi.Job) (*abi.Activation, error) {
	x := t.x
	a := &abi.Activation{Time: ev.Time.UnixNano(), Replaying: replaying, Jobs: []abi.Job{job},
		HistoryLength: uint64(x.applied), HistorySize: uint64(x.size), ContinueAsNewSuggested: x.warning > 0 && int64(x.applied) > x.warning}
	if replaying {
		a.Patches = t.patchesAfter(int(ev.ID - 1))
	}
	t.asked, t.askedReplaying = ev, replaying
	return a, nil
}

// patchesAfter returns the change ids of the patch markers among the
// commands recorded for the step of history[i]: the schedule events that
// follow it, past any marker (a reset records the last kept step's
// commands after its marker).
func (t *Turn) patchesAfter(i int) []string {
	var ids []string
	for j := i + 1; j < t.historyLen(); j++ {
		ev := t.event(j)
		if ev.isMarker() {
			continue
		}
		if !ev.isSchedule() {
			break
		}
		if ev.Kind == PatchRecorded {
			ids = append(ids, ev.Name)
		}
	}
	return ids
}

// failInstance ends the execution with a failure the engine records itself.
func (t *Turn) failInstance(err error) {
	x := t.x
	x.broken, x.pending = err, nil
	t.res.Err = err
	if x.status.ends() {
		return
	}
	f := &Failure{Message: err.Error()}
	t.record(Event{Kind: OrchestrationFailed, Failure: f})
	x.applied, x.lastID = t.historyLen(), int64(t.historyLen())
	x.status, x.failure = StatusFailed, f
}

// terminated is the failure a terminated instance reports (to its parent,
// and to clients).
func terminated(reason string) *Failure {
	if reason == "" {
		return &Failure{Message: "terminated"}
	}
	return &Failure{Message: "terminated: " + reason}
}

// scheduleKindOf returns the schedule event kind a completion kind completes.
func scheduleKindOf(k EventKind) EventKind {
	switch k {
	case TimerFired:
		return TimerCreated
	case ExternalEvent:
		return ExternalSubscribed
	case SubOrchestrationCompleted, SubOrchestrationFailed:
		return SubOrchestrationScheduled
	case ExternalEventDelivered, ExternalEventNotDelivered:
		return ExternalEventSent
	}
	return ActivityScheduled
}
