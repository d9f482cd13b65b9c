package durtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
)

// Instance is one orchestration instance an Env runs: a started one or a
// child.
type Instance struct {
	env      *Env
	id, name string
	// parent is the instance that started this one as a child it waits
	// for, in its execution parentExecution, as its event parentSchedule.
	parent          *Instance
	parentExecution int
	parentSchedule  int64
	// executions holds the history of every execution, the current last;
	// crashed marks those the engine failed (a guest crash or
	// nondeterminism), which the replay check leaves out.
	executions [][]engine.Event
	crashed    map[int]bool
	// exec is the engine's side of the current execution, and guest the
	// SDK's runtime that applies it alongside.
	exec    *engine.Execution
	guest   *guest
	inbox   []message
	dropped []engine.Dropped
	status  engine.Status
	result  json.RawMessage
	failure *engine.Failure
	custom  string
	// attributes are the events of the execution that set search
	// attributes (engine.Attributes reads them).
	attributes []engine.Event
	// refused holds why each update the orchestration refused was
	// refused; updates counts the updates sent, to name the next.
	refused map[string]*engine.Failure
	updates int
}

// message is a message waiting for an instance, visible from visible.
type message struct {
	ev      engine.Event
	visible time.Time
	seq     int64
}

// ID returns the instance's id.
func (i *Instance) ID() string { return i.id }

// Status returns where the instance stands: Running while it waits,
// Completed, Failed or Canceled once it has ended.
func (i *Instance) Status() engine.Status { return i.status }

// Result decodes the instance's result into out (nil to ignore it) once it
// has completed. If it failed or was cancelled, Result returns an error
// that wraps its *engine.Failure; if it has not ended, one that says what
// it is doing.
func (i *Instance) Result(out any) error {
	switch {
	case i.status == engine.StatusCompleted:
		if out == nil || len(i.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(i.result, out); err != nil {
			return fmt.Errorf("durtest: the result of instance %s, %s, does not decode into %T: %w", i.id, i.result, out, err)
		}
		return nil
	case i.status.IsTerminal():
		return fmt.Errorf("durtest: instance %s %s: %w", i.id, strings.ToLower(string(i.status)), i.failure)
	}
	return fmt.Errorf("durtest: instance %s has not ended: it is %s, and its history ends with %s", i.id, i.status, i.last())
}

// Failure returns why the instance failed (or was cancelled), or nil.
func (i *Instance) Failure() *engine.Failure { return i.failure }

// CustomStatus returns the custom status the orchestration set last.
func (i *Instance) CustomStatus() string { return i.custom }

// Attributes returns the search attributes the current execution set
// (ctx.SetAttributes) and did not remove, by name.
func (i *Instance) Attributes() []abi.Attribute { return engine.Attributes(i.attributes) }

// History returns the history of the instance's current execution, the
// events a host would record (durabox history shows the same).
func (i *Instance) History() []engine.Event { return slices.Clone(i.executions[len(i.executions)-1]) }

// Executions returns how many executions the instance has had: one, plus
// one for each time it continued as new.
func (i *Instance) Executions() int { return len(i.executions) }

// ExecutionHistory returns the history of execution n, from 1.
func (i *Instance) ExecutionHistory(n int) []engine.Event {
	i.env.t.Helper()
	if n < 1 || n > len(i.executions) {
		i.env.t.Fatalf("durtest: instance %s has executions 1 to %d, not %d", i.id, len(i.executions), n)
	}
	return slices.Clone(i.executions[n-1])
}

// Dropped returns the messages the engine consumed without applying, with
// its reasons: events raised while no wait for them was active, results
// for operations cancelled, anything for an instance that has ended.
func (i *Instance) Dropped() []engine.Dropped { return slices.Clone(i.dropped) }

// Children returns the instances this one started, waited for or
// detached, in the order it started them.
func (i *Instance) Children() []*Instance {
	var out []*Instance
	for _, c := range i.env.instances {
		if i.started(c.id) {
			out = append(out, c)
		}
	}
	return out
}

// started reports whether one of the instance's histories starts the
// instance id as a child.
func (i *Instance) started(id string) bool {
	for _, h := range i.executions {
		for _, ev := range h {
			if (ev.Kind == engine.SubOrchestrationScheduled || ev.Kind == engine.OrchestrationChained) && ev.InstanceID == id {
				return true
			}
		}
	}
	return false
}

// Raise raises the external event name with data (encoded to JSON) for
// the instance, as durabox raise does, and runs what follows. It goes to
// the oldest wait for it that is active; with none it is dropped (see
// Dropped).
func (i *Instance) Raise(name string, data any) {
	i.env.t.Helper()
	i.raise(engine.ExternalEvent, name, data)
}

// RaisePersistent raises the persistent event name with data for the
// instance, as durabox raise --persistent does, and runs what follows. It
// waits in the instance's mailbox until a persistent wait takes it.
func (i *Instance) RaisePersistent(name string, data any) {
	i.env.t.Helper()
	i.raise(engine.ExternalEventPersistent, name, data)
}

func (i *Instance) raise(kind engine.EventKind, name string, data any) {
	i.env.t.Helper()
	if err := abi.CheckName("event name", name); err != nil {
		i.env.t.Fatal("durtest: " + err.Error())
	}
	i.enqueue(engine.Event{Kind: kind, Name: name, Result: i.env.encode("the data of event "+name, data)}, i.env.now)
	i.env.settle()
}

// Cancel requests the instance's cancellation for reason, as durabox
// cancel does, and runs what follows: the operations it waits on fail with
// a *durabox.CanceledError, its children are cancelled too, and it may
// clean up before it ends.
func (i *Instance) Cancel(reason string) {
	i.enqueue(engine.Event{Kind: engine.OrchestrationCancelRequested, Reason: reason}, i.env.now)
	i.env.settle()
}

// AdvanceToEnd moves the clock from one due moment to the next (see
// Env.AdvanceToNext) until the instance has ended. It fails the test if
// nothing more is due while the instance still waits (for an event, say),
// or after 100,000 moves.
func (i *Instance) AdvanceToEnd() {
	i.env.t.Helper()
	for range maxSteps {
		if i.status.IsTerminal() {
			return
		}
		if !i.env.AdvanceToNext() {
			i.env.t.Fatalf("durtest: instance %s is %s and nothing more is due: it waits for something only the test can give, such as an event; its history ends with %s", i.id, i.status, i.last())
		}
	}
	i.env.t.Fatalf("durtest: instance %s has not ended after the clock moved %d times (it is now %s)", i.id, maxSteps, i.env.now)
}

// Replay replays every execution's history on a fresh runtime, as a host
// does when it has dropped the instance from memory, and returns nil if
// the orchestration reproduces each exactly, or the error that says where
// it diverges (an *engine.NondeterminismError, or its crash). The Env does
// this for every instance when the test ends.
func (i *Instance) Replay() error {
	for n, history := range i.executions {
		if err := replay(history, i.env.opts.StepTimeout); err != nil {
			return fmt.Errorf("durtest: instance %s, execution %d: %w", i.id, n+1, err)
		}
	}
	return nil
}

// last describes the last event of the current execution.
func (i *Instance) last() string {
	h := i.executions[len(i.executions)-1]
	if len(h) == 0 {
		return "nothing (it has not started)"
	}
	return h[len(h)-1].String()
}

func (i *Instance) enqueue(ev engine.Event, visible time.Time) {
	i.env.seq++
	i.inbox = append(i.inbox, message{ev: ev, visible: visible, seq: i.env.seq})
}

// Query runs the query name with arg (encoded to JSON) on the instance, as
// durabox query does, and decodes its answer into out (nil to ignore it).
// Nothing is recorded and nothing runs after it. The error says why the
// query failed: the handler's error, a handler that used the
// orchestration's Context (which a query may not), or a name the instance
// handles no query of, listing those it does. Like a host, it answers
// finished instances too, from the handlers registered before the
// orchestration returned.
func (i *Instance) Query(name string, arg, out any) error {
	i.env.t.Helper()
	if err := abi.CheckName("query name", name); err != nil {
		i.env.t.Fatal("durtest: " + err.Error())
	}
	res, err := i.guest.Query(&abi.QueryRequest{Name: name, Input: i.env.encode("the argument of query "+name, arg)})
	switch {
	case err != nil:
		return fmt.Errorf("durtest: query %q of instance %s: %w", name, i.id, err)
	case !slices.Contains(res.Handlers, name):
		return fmt.Errorf("durtest: instance %s handles no query %q; it handles %s", i.id, name, names(res.Handlers))
	case res.Failure != nil:
		return fmt.Errorf("durtest: query %q of instance %s failed: %s", name, i.id, res.Failure.Message)
	case out == nil || len(res.Output) == 0:
		return nil
	}
	if err := json.Unmarshal(res.Output, out); err != nil {
		return fmt.Errorf("durtest: the answer of query %q of instance %s, %s, does not decode into %T: %w", name, i.id, res.Output, out, err)
	}
	return nil
}

// names lists names for a message, or says there are none.
func names(names []string) string {
	if len(names) == 0 {
		return "none (it has registered no query handler yet)"
	}
	return fmt.Sprintf("%q", names)
}

// Update sends the update name with arg (encoded to JSON) to the
// instance, as durabox update does, runs what follows until the update is
// answered (moving the clock from one due moment to the next while its
// handler waits on activities or timers, as AdvanceToNext does) and
// decodes the handler's answer into out (nil to ignore it). The error is
// the handler's, or says that the update was refused (by its validator,
// or for want of a handler of that name), leaving no trace in history, or
// that the instance ended before it answered, or had ended already. It fails the test if the
// handler waits for something only the test can give, such as an event.
func (i *Instance) Update(name string, arg, out any) error {
	i.env.t.Helper()
	if err := abi.CheckName("update name", name); err != nil {
		i.env.t.Fatal("durtest: " + err.Error())
	}
	if i.status.IsTerminal() {
		return fmt.Errorf("durtest: instance %s is %s: a host refuses an update of a finished instance", i.id, i.status)
	}
	i.updates++
	id := fmt.Sprintf("update-%d", i.updates)
	i.enqueue(engine.UpdateRequest(id, name, i.env.encode("the argument of update "+name, arg)), i.env.now)
	i.env.settle()
	for range maxSteps {
		if done, err := i.answer(id, name, out); done {
			return err
		}
		if !i.env.AdvanceToNext() {
			i.env.t.Fatalf("durtest: update %q (%s) of instance %s is not answered and nothing more is due: its handler waits for something only the test can give, such as an event; the history ends with %s", name, id, i.id, i.last())
		}
	}
	i.env.t.Fatalf("durtest: update %q of instance %s is not answered after the clock moved %d times", name, i.id, maxSteps)
	return nil
}

// answer reports whether the update id (of the update name) is answered,
// and its answer: decoded into out, or the error.
func (i *Instance) answer(id, name string, out any) (bool, error) {
	if f := i.refused[id]; f != nil {
		return true, fmt.Errorf("durtest: instance %s refused update %q: %s", i.id, name, f.Message)
	}
	accepted := false
	for n, h := range i.executions {
		for _, ev := range h {
			switch {
			case ev.UpdateID != id:
			case ev.Kind == engine.UpdateAccepted:
				accepted = n < len(i.executions)-1
			case ev.Kind == engine.UpdateCompleted && ev.Failure != nil:
				return true, fmt.Errorf("durtest: update %q of instance %s failed: %s", name, i.id, ev.Failure.Message)
			case ev.Kind == engine.UpdateCompleted && (out == nil || len(ev.Result) == 0):
				return true, nil
			case ev.Kind == engine.UpdateCompleted:
				if err := json.Unmarshal(ev.Result, out); err != nil {
					return true, fmt.Errorf("durtest: the answer of update %q of instance %s, %s, does not decode into %T: %w", name, i.id, ev.Result, out, err)
				}
				return true, nil
			}
		}
	}
	if accepted || i.status.IsTerminal() {
		// Its execution ended, or the instance did, before the handler
		// answered (or before the update was delivered).
		return true, fmt.Errorf("durtest: instance %s ended an execution (it is now %s) before update %q was answered", i.id, i.status, name)
	}
	return false, nil
}
