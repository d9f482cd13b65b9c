package durabox

import (
	"fmt"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/plainjson"
)

// Context is what an orchestration uses to do anything durable: call
// activities, start timers, read the logical clock. The Context an
// orchestration function is given is the instance's; WithCancel makes one
// whose operations are cancelled together.
type Context struct {
	rt *runtime
	// scope is the cancellation scope the Context's operations belong to:
	// nil for the instance's own Context.
	scope *scope
}

// InstanceID returns the id of the orchestration instance.
func (c *Context) InstanceID() string {
	c.rt.own("ctx.InstanceID")
	return c.rt.instanceID
}

// Now returns the logical time: the time the step being applied was
// recorded. It is the same on every replay (and so is time.Now).
func (c *Context) Now() time.Time {
	c.rt.own("ctx.Now")
	return c.rt.now
}

// Err returns a *CanceledError once the instance's cancellation has been
// requested, and nil before. Operations the orchestration was waiting on then
// fail with it; new ones (to clean up) run as usual. The request does not
// end the orchestration: if it returns an error the instance ends Canceled,
// and if it completes anyway, Completed with its result.
func (c *Context) Err() error {
	c.rt.own("ctx.Err")
	if c.rt.cancelled == nil {
		return nil
	}
	return c.rt.cancelled
}

// SetCustomStatus sets the instance's custom status: a short text about
// its progress that clients read (durabox status). It is recorded in history
// and does not wait.
func (c *Context) SetCustomStatus(status string) {
	c.rt.own("ctx.SetCustomStatus")
	c.rt.command(abi.Command{Kind: abi.CommandSetCustomStatus, Name: status})
}

// IsReplaying reports whether the orchestration is re-running steps that
// were already recorded: it is false while the host applies the steps the
// current turn records, and true while it re-applies steps recorded in an
// earlier turn (after a restart, or when the instance left memory). Guard
// side effects that should happen once with it (a turn whose commit fails,
// in a crash say, runs its steps again as new, so they happen at least
// once). It is the one thing that differs between a step's first run and
// its replays, so what it guards must not decide anything, nor change the
// heap of an orchestration that decides by its heap.
func (c *Context) IsReplaying() bool {
	c.rt.own("ctx.IsReplaying")
	return c.rt.replaying
}

// HistoryLength returns the number of events of the execution's history
// the orchestration has applied, the current step's included: the length
// its history had when this step first ran, the same on every replay.
// With HistorySize and ShouldContinueAsNew it lets an orchestration that
// runs long decide when to continue as new.
func (c *Context) HistoryLength() int {
	c.rt.own("ctx.HistoryLength")
	return int(c.rt.activation.HistoryLength)
}

// HistorySize returns the bytes of payload those events carry: their
// names, inputs, results, failures and texts (not the kind, time and ids
// each has). Like HistoryLength, it is the same on every replay.
func (c *Context) HistorySize() int {
	c.rt.own("ctx.HistorySize")
	return int(c.rt.activation.HistorySize)
}

// ShouldContinueAsNew reports whether the history is past the host's
// history warning (durabox serve --history-warning, as it stood when the
// execution started), the length past which the host warns about the
// instance: the orchestration should finish what it is doing and call
// ContinueAsNew. It is the same on every replay, and false in an execution
// a host older than this call started.
func (c *Context) ShouldContinueAsNew() bool {
	c.rt.own("ctx.ShouldContinueAsNew")
	return c.rt.activation.ContinueAsNewSuggested
}

// CallActivity schedules the activity name with input (encoded to JSON) and
// returns a future for its result. Options such as WithTimeout change how
// this call runs; they are in history, and replay compares them like the
// name and input.
func (c *Context) CallActivity(name string, input any, opts ...CallOption) *Future {
	c.rt.own("ctx.CallActivity")
	raw, err := plainjson.Marshal(input)
	if err != nil {
		err = fmt.Errorf("durabox: input of activity %q does not encode to JSON: %w", name, err)
	}
	cmd := abi.Command{Kind: abi.CommandScheduleActivity, Name: name, Input: raw, TaskQueue: defaultQueue, Retry: defaultRetry}
	for _, o := range opts {
		if err == nil {
			err = o.apply(name, &cmd)
		}
	}
	if err != nil {
		return c.rt.settled(err)
	}
	return c.op(cmd)
}

// CallOption changes how one activity call runs: pass it to CallActivity,
// Call or CallWithRetry.
type CallOption struct {
	apply func(name string, cmd *abi.Command) error
}

// WithTimeout sets the deadline of each attempt of this activity call: an
// attempt that runs longer is stopped and fails the call with an
// *ActivityError that names the deadline. It replaces the host's default
// (durabox serve --activity-timeout), shorter or longer. d is rounded up to
// a whole millisecond and must be positive.
func WithTimeout(d time.Duration) CallOption {
	return CallOption{func(name string, cmd *abi.Command) error {
		ms, err := positiveMillis("WithTimeout", name, d)
		cmd.TimeoutMillis = ms
		return err
	}}
}

// OnQueue gives this activity call's tasks to the task queue queue: they
// are run not by the host, in the module, but by the workers that serve
// that queue (package worker, or any program that speaks the worker
// protocol of docs/workers.md). Tasks on a queue no worker serves wait
// until one does; other queues go on. It replaces the module's default
// (DefaultQueue).
func OnQueue(queue string) CallOption {
	return CallOption{func(name string, cmd *abi.Command) error {
		if err := abi.CheckTaskQueue(queue); err != nil {
			return fmt.Errorf("durabox: OnQueue(%q) for activity %q: %w", queue, name, err)
		}
		cmd.TaskQueue = queue
		return nil
	}}
}

// WithHeartbeatTimeout asks each attempt of this activity call to send a
// heartbeat (Heartbeat) at least every d: an attempt silent for longer
// counts as failed, and the task is delivered again, to this host or
// another worker, with the last heartbeat's details (LastHeartbeat). Use it
// for long activities, so that a stuck or lost attempt is found long before
// its deadline. d is rounded up to a whole millisecond and must be
// positive.
func WithHeartbeatTimeout(d time.Duration) CallOption {
	return CallOption{func(name string, cmd *abi.Command) error {
		ms, err := positiveMillis("WithHeartbeatTimeout", name, d)
		cmd.HeartbeatTimeoutMillis = ms
		return err
	}}
}

// positiveMillis rounds d up to whole milliseconds, or says why option
// cannot take it.
func positiveMillis(option, name string, d time.Duration) (uint64, error) {
	if d <= 0 {
		return 0, fmt.Errorf("durabox: %s(%s) for activity %q: the duration must be positive (leave the option out for the host's default)", option, d, name)
	}
	return millisUp(d), nil
}

// defaultQueue is the task queue of the calls that name none
// (DefaultQueue).
var defaultQueue string

// DefaultQueue sets the task queue of every activity call of this module
// that does not name one with OnQueue; call it in init. The empty name, the
// default, runs activities in the module, in the host.
func DefaultQueue(queue string) {
	if queue != "" {
		if err := abi.CheckTaskQueue(queue); err != nil {
			panic(fmt.Sprintf("durabox: DefaultQueue(%q): %v", queue, err))
		}
	}
	defaultQueue = queue
}

// NewTimer starts a durable timer that fires d after the current logical
// time, and returns a future that resolves when it fires. A timer that
// would fire after 2262-04-11 (the latest time the host keeps) fires then:
// NewTimer(math.MaxInt64) waits, in effect, for ever.
func (c *Context) NewTimer(d time.Duration) *Future {
	c.rt.own("ctx.NewTimer")
	return c.op(abi.Command{Kind: abi.CommandStartTimer, Delay: int64(d)})
}

// WaitEvent returns a future for the next external event called name (its
// data, JSON, is the result). Events are positional: each raise goes to the
// oldest wait of that name that is active when it arrives. An event raised
// while no wait for it is active (before the wait, or after a wait that lost
// a Select) is dropped, as it was meant for a moment that has passed; use
// WaitEventPersistent for events that must not be lost.
func (c *Context) WaitEvent(name string) *Future {
	c.rt.own("ctx.WaitEvent")
	return c.op(abi.Command{Kind: abi.CommandWaitEvent, Name: name})
}

// WaitEventPersistent returns a future for the oldest persistent event
// called name that no wait has taken yet, raised before or after this call.
// Persistent events survive a wait that lost a Select; an execution takes
// at most 20 of them (unless the host sets another limit: durabox serve
// --max-persistent-events).
func (c *Context) WaitEventPersistent(name string) *Future {
	c.rt.own("ctx.WaitEventPersistent")
	return c.op(abi.Command{Kind: abi.CommandWaitEventPersistent, Name: name})
}

// CallChild starts the orchestration name with input as a child instance
// and returns a future for its result. A child that fails resolves the
// future with a *ChildError.
//
// Unless id is given, the host derives the child's id from this
// instance's id, its execution and the event that records the call:
// PARENT~EXECUTION:EVENT ("order-7~1:2"). Derived ids are unique: the
// execution number grows with every ContinueAsNew and every reset, so the
// same call in another execution, or run again by a reset, starts another
// child; and no id a client or an orchestration chooses has a '~'. An id
// given must be one a client could choose (1 to 128 letters, digits, '.',
// '_', ':' or '-', starting with a letter or digit), or the future fails at
// once with the reason; it is taken by whatever instance has it already
// (an earlier execution's child, or the child of a step a reset runs
// again), and then the child does not start and the future fails.
func (c *Context) CallChild(name string, input any, id ...string) *Future {
	c.rt.own("ctx.CallChild")
	return c.startChild(name, input, false, id)
}

// StartDetached starts the orchestration name with input as an instance
// nobody waits for (fire and forget), and returns at once. Its id is
// derived as for CallChild unless id is given; an id given that a client
// could not choose is refused with the returned error. Through a cancelled
// Context (WithCancel) it starts nothing and returns ErrCanceled.
func (c *Context) StartDetached(name string, input any, id ...string) error {
	c.rt.own("ctx.StartDetached")
	return c.startChild(name, input, true, id).err
}

func (c *Context) startChild(name string, input any, detached bool, id []string) *Future {
	raw, err := plainjson.Marshal(input)
	if err != nil {
		err = fmt.Errorf("durabox: input of orchestration %q does not encode to JSON: %w", name, err)
	}
	cmd := abi.Command{Kind: abi.CommandStartChild, Name: name, Input: raw, Detached: detached}
	if len(id) > 0 && err == nil {
		cmd.InstanceID = id[0]
		if idErr := abi.CheckInstanceID(id[0]); idErr != nil {
			err = fmt.Errorf("durabox: child orchestration %q cannot start: %w", name, idErr)
		}
	}
	if err != nil {
		return c.rt.settled(err)
	}
	return c.op(cmd)
}

// Child calls the child orchestration name with input and waits for its
// result, decoded as T.
func Child[T any](ctx *Context, name string, input any) (T, error) {
	return Await[T](ctx.CallChild(name, input))
}

// Sleep blocks the orchestration for d, durably: the host keeps the timer
// across restarts.
func (c *Context) Sleep(d time.Duration) error { return c.NewTimer(d).Get(nil) }

// Call calls the activity name with input and waits for its result, decoded
// as T. opts are as for CallActivity.
func Call[T any](ctx *Context, name string, input any, opts ...CallOption) (T, error) {
	return Await[T](ctx.CallActivity(name, input, opts...))
}

// ContinueAsNew returns the error that, returned by the orchestration
// function, ends this execution and starts a new one of the same
// orchestration with input (encoded to JSON) and a fresh, empty history. Use
// it for orchestrations that run forever. Persistent events no wait took yet
// are carried over to the new execution (the newest 20, its limit, unless
// the host sets another).
//
//	return nil, ctx.ContinueAsNew(next)
func (c *Context) ContinueAsNew(input any) error {
	c.rt.own("ctx.ContinueAsNew")
	raw, err := plainjson.Marshal(input)
	if err != nil {
		return fmt.Errorf("durabox: the input to continue as new with does not encode to JSON: %w", err)
	}
	return &ContinueAsNewError{input: raw}
}

// ContinueAsNewError is what ContinueAsNew returns; an orchestration returns
// it to continue as new.
type ContinueAsNewError struct{ input []byte }

func (e *ContinueAsNewError) Error() string {
	return "durabox: the orchestration continues as new with input " + string(e.input)
}

// Select waits until one of futures resolves and returns its index; if
// several have resolved already, the first of them in the list wins. The
// others are cancelled: their operations are cancelled by commands recorded
// in history (a timer will not fire; an activity's result, if it comes, is
// ignored; a wait takes no event, and a persistent event it would have
// taken stays for a later wait) and their futures resolve with ErrCanceled.
// A branch's future (Go) is not an operation, and a branch cannot be
// stopped from outside: when it loses, its branch runs on, and its future
// resolves when the branch returns, as if there had been no Select (to stop
// a branch, have it select on something the winner resolves). The winner
// is the same on every replay. SelectKeep is the same wait without the
// cancelling.
func (c *Context) Select(futures ...*Future) int {
	c.rt.own("ctx.Select")
	i := c.rt.first(futures)
	for j, other := range futures {
		if j != i {
			other.cancel()
		}
	}
	return i
}

// SelectKeep waits until one of futures resolves and returns its index, as
// Select does, but cancels nothing: the others keep running, and each
// resolves in its own time (an activity's result is delivered, a timer
// fires, a wait takes its event), to be read with Get or passed to a later
// SelectKeep. Pass only the futures still to wait for: a future already
// resolved wins again at once.
func (c *Context) SelectKeep(futures ...*Future) int {
	c.rt.own("ctx.SelectKeep")
	return c.rt.first(futures)
}

// first waits until one of futures resolves and returns the index of the
// first resolved in the list.
func (rt *runtime) first(futures []*Future) int {
	for {
		for i, f := range futures {
			if f.resolved {
				return i
			}
		}
		rt.sched.wait(futures)
	}
}

// Go runs fn concurrently with the rest of the orchestration, as a branch,
// and returns a future that resolves (with no value) when fn returns.
// Branches run one at a time, in an order fixed by the structure of the code
// (which branch started which, and in what order), never by timing, so they
// replay exactly. Only the orchestration function and its branches may use
// the Context and its futures: a goroutine started with a go statement that
// does fails the instance. The orchestration ends when its function
// returns, whatever its branches are doing; a panic in a branch fails the
// orchestration.
func (c *Context) Go(fn func(ctx *Context)) *Future {
	rt := c.rt
	rt.own("ctx.Go")
	done := &Future{rt: rt}
	rt.sched.spawn(rt.guard("panic in a branch", func() {
		fn(c)
		done.settle(nil, nil)
	}))
	return done
}
