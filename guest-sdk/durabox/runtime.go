package durabox

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
)

// sdkName is reported in the module's manifest.
const sdkName = "durabox-go/0.1"

// runtime is the guest side of one orchestration instance: a wasm instance
// runs exactly one.
type runtime struct {
	sched      *scheduler
	instanceID string
	now        time.Time
	replaying  bool
	started    bool
	// startedAt is the logical time of the start, in Unix nanoseconds;
	// guids counts NewGUID calls.
	startedAt int64
	guids     uint64
	// rand is ctx.Rand's source, made on first use.
	rand *rand.Rand
	// cancelled holds the reason once the instance's cancellation was
	// requested.
	cancelled *CanceledError
	// seq is the sequence number of the last command emitted.
	seq      uint64
	futures  map[uint64]*Future
	commands []abi.Command
	// activation is the one being applied; patched holds every answer
	// Patched gave.
	activation *abi.Activation
	patched    map[string]bool
	// queries are the query handlers registered (HandleQuery); querying
	// names the code that may only read (a query's handler, an update's
	// validator) while it runs.
	queries  map[string]queryFunc
	querying string
	// updates are the update handlers registered (HandleUpdate);
	// handlersBegun counts the handlers started, handlersRunning those
	// that have not returned. refused is set while an activation's update
	// is refused: its refusal is the activation's only command.
	updates                        map[string]*updateHandler
	handlersBegun, handlersRunning int
	refused                        bool
}

func newRuntime() *runtime {
	return &runtime{sched: newScheduler(), futures: map[uint64]*Future{}, patched: map[string]bool{}, queries: map[string]queryFunc{}, updates: map[string]*updateHandler{}}
}

// command emits c with the next sequence number and returns its future.
func (rt *runtime) command(c abi.Command) *Future {
	rt.seq++
	c.Seq = rt.seq
	rt.commands = append(rt.commands, c)
	f := &Future{rt: rt, seq: c.Seq, kind: c.Kind, name: c.Name}
	switch {
	case c.Kind == abi.CommandStartChild && c.Detached:
		f.settle(nil, nil)
	case c.Kind == abi.CommandScheduleActivity, c.Kind == abi.CommandStartTimer, c.Kind == abi.CommandWaitEvent,
		c.Kind == abi.CommandWaitEventPersistent, c.Kind == abi.CommandStartChild, c.Kind == abi.CommandRaise:
		rt.futures[c.Seq] = f
	}
	return f
}

// settled returns a future of no operation, resolved with err.
func (rt *runtime) settled(err error) *Future {
	f := &Future{rt: rt}
	f.settle(nil, err)
	return f
}

// activate applies an activation's jobs, runs the orchestration until it is
// quiescent and returns the commands it emitted.
func (rt *runtime) activate(a *abi.Activation) []abi.Command {
	rt.now, rt.replaying, rt.activation = time.Unix(0, a.Time).UTC(), a.Replaying, a
	for _, j := range a.Jobs {
		rt.apply(j)
	}
	if !rt.refused {
		rt.sched.changed = true
		rt.sched.run()
	}
	rt.refused = false
	out := rt.commands
	rt.commands = nil
	return out
}

// recycle gives back the slice activate returned, once its commands are
// encoded, so that the next activation appends to it rather than allocate.
func (rt *runtime) recycle(cmds []abi.Command) {
	clear(cmds)
	rt.commands = cmds[:0]
}

func (rt *runtime) apply(j abi.Job) {
	switch j.Kind {
	case abi.JobStart:
		if rt.started {
			return
		}
		rt.started, rt.instanceID, rt.startedAt = true, j.InstanceID, rt.now.UnixNano()
		rt.start(j.Name, j.Input)
	case abi.JobResolveActivity:
		rt.take(j.Seq).resolveActivity(j)
	case abi.JobFireTimer:
		rt.take(j.Seq).resolve(nil, nil)
	case abi.JobResolveEvent:
		rt.take(j.Seq).resolve(j.Result, nil)
	case abi.JobResolveChild, abi.JobResolveRaise:
		rt.take(j.Seq).resolve(j.Result, j.Failure)
	case abi.JobCancel:
		rt.cancel(j.Name)
	case abi.JobUpdate:
		rt.update(j)
	}
}

// cancel handles the instance's cancellation: every operation waited on is
// cancelled, in command order, and its future fails with the reason, as
// does every Await parked.
func (rt *runtime) cancel(reason string) {
	rt.cancelled = &CanceledError{Reason: reason}
	for _, seq := range slices.Sorted(maps.Keys(rt.futures)) {
		rt.futures[seq].cancelWith(rt.cancelled)
	}
	rt.sched.endAwaits(func(*Future) bool { return true }, rt.cancelled)
}

// take removes and returns the future of command seq. A sequence number
// with no future is a host bug; a detached future keeps the guest going.
func (rt *runtime) take(seq uint64) *Future {
	f, ok := rt.futures[seq]
	if !ok {
		return &Future{rt: rt}
	}
	delete(rt.futures, seq)
	return f
}

// start spawns the root unit running orchestration name.
func (rt *runtime) start(name string, input []byte) {
	fn, ok := orchestrations[name]
	if !ok {
		rt.finish(nil, fmt.Errorf("durabox: this module registers no orchestration %q (it registers %v)", name, sortedNames(orchestrations)), "")
		return
	}
	ctx := &Context{rt: rt}
	rt.sched.spawn(rt.guard("panic", func() {
		out, err := fn(ctx, input)
		rt.finish(out, err, "")
	}))
}

// guard returns a unit's code, body, made to end the orchestration with a
// failure if body panics (the message is prefix and the panic's value) or
// calls runtime.Goexit (which would otherwise leave the unit's futures and
// the orchestration waiting for ever). A Goexit cannot be stopped once
// begun, and the coroutine would pass it on to the scheduler when it ends:
// the unit gives the turn back before it does, and is never resumed.
func (rt *runtime) guard(prefix string, body func()) func() {
	return func() {
		returned := false
		defer func() {
			if r := recover(); r != nil {
				rt.finish(nil, fmt.Errorf("%s: %v", prefix, r), string(debug.Stack()))
			} else if !returned {
				rt.finish(nil, errors.New("durabox: the orchestration called runtime.Goexit, which stops its goroutine without returning; return from the function instead"), string(debug.Stack()))
				rt.sched.release()
			}
		}()
		body()
		returned = true
	}
}

// finish emits the command that ends the orchestration, and stops the
// scheduler: nothing runs after it.
func (rt *runtime) finish(out []byte, err error, details string) {
	if rt.sched.ended {
		return
	}
	rt.sched.ended = true
	if err == nil {
		rt.command(abi.Command{Kind: abi.CommandComplete, Output: out})
		return
	}
	var can *ContinueAsNewError
	if errors.As(err, &can) {
		rt.command(abi.Command{Kind: abi.CommandContinueAsNew, Output: can.input})
		return
	}
	var ae *ActivityError
	if details == "" && errors.As(err, &ae) {
		details = ae.Details
	}
	rt.command(abi.Command{Kind: abi.CommandFail, Failure: &abi.Failure{Message: err.Error(), Details: details}})
}

// own checks that the goroutine calling the SDK's function what is the unit
// holding the turn. Any other goroutine (one started with a plain go
// statement, a finalizer) would run SDK code at a moment the scheduler does
// not choose, and could park a unit that is not its own: it fails the
// instance instead (misused).
//
// While a query's handler runs, every entry point fails the query instead
// (queryMisuse): a query must change nothing.
func (rt *runtime) own(what string) {
	if rt.querying != "" {
		panic(queryMisuse{what})
	}
	if u := rt.sched.current; u != nil && u.g == goroutine() {
		return
	}
	rt.misused(what)
}

// misused fails the instance because a goroutine the SDK does not run
// called what, and stops that goroutine for good. The unit holding the
// turn, if any, cannot be running while it does (guests have one thread),
// so it is blocked outside the SDK and the scheduler waits for it: the
// scheduler is let go (release), so that the activation ends with the
// failure.
func (rt *runtime) misused(what string) {
	rt.finish(nil, fmt.Errorf("durabox: %s was called from a goroutine the orchestration started with a go statement (or a finalizer): "+
		"only the orchestration function and the branches it starts with ctx.Go may use its Context and futures, "+
		"since they run one at a time in an order that replays; start the goroutine with ctx.Go, and wait for it with the future ctx.Go returns", what), string(debug.Stack()))
	rt.sched.release()
	select {}
}
