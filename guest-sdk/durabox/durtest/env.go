package durtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// Epoch is where an Env's fake clock starts unless Options.Start says
// otherwise.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configures an Env. The zero value means every default.
type Options struct {
	// Start is the fake clock's first reading: the logical time of the
	// first events. Zero means Epoch.
	Start time.Time
	// StepTimeout bounds, in real time, one step of an orchestration (one
	// history event applied), as a host's --step-timeout does: a step that
	// runs longer (an endless loop, or a wait on a channel, a lock or
	// time.Sleep) fails its instance instead of hanging the test. Zero
	// means 5s, a host's default.
	StepTimeout time.Duration
	// HistoryWarning is the length of an execution's history, in events,
	// past which its orchestration's ctx.ShouldContinueAsNew reports true,
	// as a host's --history-warning does. Zero means a host's default,
	// engine.DefaultHistoryWarning (50,000).
	HistoryWarning int
}

func (o *Options) validate() error {
	if o.Start.IsZero() {
		o.Start = Epoch
	}
	switch {
	case o.StepTimeout < 0:
		return fmt.Errorf("durtest: StepTimeout is %s; it must be zero (for the default, 5s) or more", o.StepTimeout)
	case o.StepTimeout == 0:
		o.StepTimeout = 5 * time.Second
	}
	switch {
	case o.HistoryWarning < 0:
		return fmt.Errorf("durtest: HistoryWarning is %d; it must be zero (for the default, %d events) or more", o.HistoryWarning, engine.DefaultHistoryWarning)
	case o.HistoryWarning == 0:
		o.HistoryWarning = engine.DefaultHistoryWarning
	}
	return nil
}

// maxSteps bounds how many times AdvanceToEnd moves the clock: an
// orchestration that sleeps forever (one that continues as new without
// end) would otherwise never let it return.
const maxSteps = 100_000

// Env is a host in miniature for one test: it runs orchestrations natively
// with the host's replay engine, their activities (the module's own or
// mocks) and their children, on a fake clock that moves only when the test
// says. After every call that changes something (Start, Raise, Advance, …)
// it has run everything that can happen at the current time: the
// orchestrations wait for a timer, an event, or an activity that takes
// time.
//
// An Env is not safe for concurrent use; make one per test.
type Env struct {
	t    testing.TB
	opts Options
	now  time.Time
	// seq numbers messages, activity tasks and callbacks as they are made:
	// of those due at once, the oldest goes first.
	seq       int64
	instances []*Instance
	byID      map[string]*Instance
	mocks     map[string]seam.Func
	durations map[string]time.Duration
	tasks     []*task
	callbacks []*callback
}

// task is an activity call waiting to run.
type task struct {
	inst *Instance
	// execution is the execution (from 1) that scheduled it: a result for
	// an execution that has since continued as new goes to nobody.
	execution int
	engine.ActivityTask
	due time.Time
	seq int64
	// timedOut says the call takes longer than its timeout: it fails, at
	// due, without running.
	timedOut bool
	// failures counts its attempts that failed and were retried, as its
	// call's retry policy says.
	failures int
}

// callback is a function the test asked to run at a given time.
type callback struct {
	at  time.Time
	seq int64
	fn  func()
}

// New returns an Env whose clock reads opts.Start. When the test ends, it
// replays every history the Env produced on a fresh runtime, and reports
// any divergence as a test error (see Instance.Replay).
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if err := opts.validate(); err != nil {
		t.Fatal(err)
	}
	e := &Env{t: t, opts: opts, now: opts.Start, byID: map[string]*Instance{}, mocks: map[string]seam.Func{}, durations: map[string]time.Duration{}}
	t.Cleanup(e.checkReplays)
	return e
}

// Now returns the fake clock's reading.
func (e *Env) Now() time.Time { return e.now }

// Start starts an instance of the orchestration name with input (encoded
// to JSON), runs it as far as it can go at the current time, and returns
// it. Its id is id if given, else "instance-N" for the Env's Nth instance.
// The orchestration must be registered (durabox.RegisterOrchestration in
// the package under test, or a package it imports).
func (e *Env) Start(name string, input any, id ...string) *Instance {
	e.t.Helper()
	if !registered(name) {
		e.t.Fatalf("durtest: no orchestration %q is registered (the test binary registers %v); register it with durabox.RegisterOrchestration in an init function", name, seam.Manifest().Orchestrations)
	}
	raw := e.encode("the input of "+name, input)
	instanceID := fmt.Sprintf("instance-%d", len(e.instances)+1)
	if len(id) > 0 {
		instanceID = id[0]
	}
	if e.byID[instanceID] != nil {
		e.t.Fatalf("durtest: instance id %q is already taken", instanceID)
	}
	inst := e.create(instanceID, name, raw)
	e.settle()
	return inst
}

// Instance returns the instance with id (a child's id is in its parent's
// SubOrchestrationScheduled event), or nil.
func (e *Env) Instance(id string) *Instance { return e.byID[id] }

// ActivityTakes makes every later call of the activity name take d on the
// fake clock: its result arrives d after the call, when Advance gets
// there. By default an activity's result arrives at once. A call whose
// durabox.WithTimeout is shorter than d fails at its deadline instead,
// without running, as a host stops the attempt.
func (e *Env) ActivityTakes(name string, d time.Duration) {
	e.t.Helper()
	if d < 0 {
		e.t.Fatalf("durtest: activity %q cannot take %s; give a duration of zero or more", name, d)
	}
	e.durations[name] = d
}

// After makes fn run once the clock has moved d past its current reading,
// in the Advance that gets there (after what was due before or at that
// moment, before what comes later). Use it to raise an event or cancel an
// instance at a chosen moment, such as while an activity runs.
func (e *Env) After(d time.Duration, fn func()) {
	e.seq++
	e.callbacks = append(e.callbacks, &callback{at: e.now.Add(d), seq: e.seq, fn: fn})
}

// Advance moves the clock forward by d, stopping at every moment something
// is due on the way (a timer, an activity's result, a callback of After)
// to run it and what follows from it at that moment.
func (e *Env) Advance(d time.Duration) {
	e.t.Helper()
	if d < 0 {
		e.t.Fatalf("durtest: the clock cannot go back (Advance(%s))", d)
	}
	end := e.now.Add(d)
	for {
		at, ok := e.nextDue()
		if !ok || at.After(end) {
			break
		}
		e.step(at)
	}
	e.now = end
}

// AdvanceToNext moves the clock to the next moment something is due (a
// timer, an activity's result, a callback of After) and runs it, and
// reports whether there was one.
func (e *Env) AdvanceToNext() bool {
	at, ok := e.nextDue()
	if ok {
		e.step(at)
	}
	return ok
}

// step moves the clock to at (if it is later), runs the callbacks due, and
// settles.
func (e *Env) step(at time.Time) {
	if at.After(e.now) {
		e.now = at
	}
	for {
		i := slices.IndexFunc(e.callbacks, func(c *callback) bool { return !c.at.After(e.now) })
		if i < 0 {
			break
		}
		c := e.callbacks[i]
		e.callbacks = slices.Delete(e.callbacks, i, i+1)
		c.fn()
	}
	e.settle()
}

// nextDue returns the earliest time something not yet visible becomes due.
func (e *Env) nextDue() (time.Time, bool) {
	var next time.Time
	consider := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	for _, inst := range e.instances {
		for _, m := range inst.inbox {
			if m.visible.After(e.now) {
				consider(m.visible)
			}
		}
	}
	for _, k := range e.tasks {
		consider(k.due)
	}
	for _, c := range e.callbacks {
		consider(c.at)
	}
	return next, !next.IsZero()
}

// settle runs everything that can happen at the current time: the turn of
// the instance with the oldest visible message, then again, and each
// activity whose result is due, in the order they were scheduled, until
// nothing is left.
func (e *Env) settle() {
	for {
		if inst := e.nextTurn(); inst != nil {
			inst.turn()
			continue
		}
		i := slices.IndexFunc(e.tasks, func(k *task) bool { return !k.due.After(e.now) })
		if i < 0 {
			return
		}
		k := e.tasks[i]
		e.tasks = slices.Delete(e.tasks, i, i+1)
		e.run(k)
	}
}

// nextTurn returns the instance whose oldest visible message is the
// oldest, or nil if none has a visible message.
func (e *Env) nextTurn() *Instance {
	var next *Instance
	var oldest int64
	for _, inst := range e.instances {
		for _, m := range inst.inbox {
			if !m.visible.After(e.now) && (next == nil || m.seq < oldest) {
				next, oldest = inst, m.seq
			}
		}
	}
	return next
}

// create makes an instance, with its OrchestrationStarted message.
func (e *Env) create(id, name string, input json.RawMessage) *Instance {
	inst := &Instance{env: e, id: id, name: name, executions: [][]engine.Event{nil}, exec: engine.NewExecution(), guest: e.newGuest(), status: engine.StatusPending,
		refused: map[string]*engine.Failure{}}
	e.instances = append(e.instances, inst)
	e.byID[id] = inst
	inst.enqueue(engine.StartMessage(id, name, input), e.now)
	return inst
}

// encode encodes v to JSON, or fails the test.
func (e *Env) encode(what string, v any) json.RawMessage {
	e.t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		e.t.Fatalf("durtest: %s does not encode to JSON: %v", what, err)
	}
	return raw
}

// checkReplays replays every execution the Env ran on a fresh runtime.
func (e *Env) checkReplays() {
	for _, inst := range e.instances {
		for n, history := range inst.executions {
			if inst.crashed[n] || len(history) == 0 {
				continue
			}
			if err := replay(history, e.opts.StepTimeout); err != nil {
				e.t.Errorf("durtest: instance %s (execution %d) does not replay its own history: %v", inst.id, n+1, err)
			}
		}
	}
}

// registered reports whether the test binary registers the orchestration
// name.
func registered(name string) bool {
	return slices.Contains(seam.Manifest().Orchestrations, name)
}
