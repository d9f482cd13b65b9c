package sqlite

import (
	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
)

// mirror is a guest that emits, at each activation, the commands history
// records after the event the activation is for: so a history an engine
// could have written replays to its end, and FuzzStoredHistory gets past
// its first step. It takes the activations to be for the events that are
// neither commands nor markers, in order; where the engine activates it
// otherwise (a persistent event delivered as its wait is bound, or not at
// all), it falls out of step and the replay diverges, as a guest's would.
type mirror struct {
	history []engine.Event
	// next is the index of the first event not yet mirrored.
	next int
	seq  uint64
	// seqOf maps each schedule event mirrored to its command's sequence
	// number, which cancel commands name.
	seqOf map[int64]uint64
}

// turn runs a turn of a new execution on in, on the mirror of history.
func turn(history []engine.Event, in engine.TurnInput) (*engine.TurnResult, error) {
	t, err := engine.NewExecution().Begin(in)
	if err != nil {
		return nil, err
	}
	m := &mirror{history: history, seqOf: map[int64]uint64{}}
	for a := t.Next(); a != nil; a = t.Next() {
		t.Answer(m.Activate(a))
	}
	return t.Result(), nil
}

func (m *mirror) Activate(*abi.Activation) ([]abi.Command, error) {
	for m.next < len(m.history) && !m.activates(&m.history[m.next]) {
		m.next++
	}
	m.next++
	var out []abi.Command
	for ; m.next < len(m.history); m.next++ {
		ev := &m.history[m.next]
		if marker(ev) {
			continue
		}
		c, ok := m.command(ev)
		if !ok {
			break
		}
		m.seq++
		c.Seq, m.seqOf[ev.ID] = m.seq, m.seq
		out = append(out, c)
	}
	return out, nil
}

// activates reports whether ev is one the orchestration reacts to.
func (m *mirror) activates(ev *engine.Event) bool {
	_, cmd := m.command(ev)
	return !cmd && !marker(ev)
}

func marker(ev *engine.Event) bool {
	return ev.Kind == engine.ModuleChanged || ev.Kind == engine.ExecutionReset
}

// command returns the command ev records, if it records one.
func (m *mirror) command(ev *engine.Event) (abi.Command, bool) {
	c := abi.Command{Name: ev.Name, Input: ev.Input, Target: m.seqOf[ev.ScheduleID]}
	switch ev.Kind {
	case engine.ActivityScheduled:
		c.Kind, c.TimeoutMillis = abi.CommandScheduleActivity, uint64(ev.TimeoutMs)
	case engine.TimerCreated:
		c.Kind = abi.CommandStartTimer
	case engine.OrchestrationCompleted:
		c.Kind, c.Output = abi.CommandComplete, ev.Result
	case engine.OrchestrationFailed:
		c.Kind = abi.CommandFail
		if ev.Failure != nil {
			c.Failure = &abi.Failure{Message: ev.Failure.Message, Details: ev.Failure.Details}
		}
	case engine.OrchestrationContinuedAsNew:
		c.Kind, c.Output = abi.CommandContinueAsNew, ev.Input
	case engine.TimerCancelled:
		c.Kind = abi.CommandCancelTimer
	case engine.ActivityCancelRequested:
		c.Kind = abi.CommandCancelActivity
	case engine.ExternalSubscribed:
		c.Kind = abi.CommandWaitEvent
	case engine.ExternalSubscribedPersistent:
		c.Kind = abi.CommandWaitEventPersistent
	case engine.ExternalSubscribedCancelled:
		c.Kind = abi.CommandCancelWait
	case engine.SubOrchestrationScheduled, engine.OrchestrationChained:
		c.Kind, c.InstanceID, c.Detached = abi.CommandStartChild, ev.InstanceID, ev.Kind == engine.OrchestrationChained
	case engine.SubOrchestrationCancelRequested:
		c.Kind = abi.CommandCancelChild
	case engine.CustomStatusSet:
		c.Kind, c.Name = abi.CommandSetCustomStatus, ev.CustomStatus
	case engine.PatchRecorded:
		c.Kind = abi.CommandPatch
	default:
		return abi.Command{}, false
	}
	return c, true
}
