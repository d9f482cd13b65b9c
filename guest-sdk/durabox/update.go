package durabox

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// updateHandler is an update's handler and validator, on JSON.
type updateHandler struct {
	// validate refuses an update before anything of it is recorded; nil
	// when the handler has no validator.
	validate func(input []byte) error
	run      func(ctx *Context, input []byte) ([]byte, error)
}

// UpdateOption configures an update handler (HandleUpdate).
type UpdateOption[In any] struct {
	validate func(In) error
}

// WithValidator gives an update handler a validator: fn runs first, when
// the update arrives, and an error from it refuses the update, which then
// leaves no trace in history (the caller gets the error); nil lets the
// handler run. Like a query's handler, fn only reads the orchestration's
// state, and may not use its Context or futures: a validator that tries,
// or panics, refuses the update. It must decide by the orchestration's
// state and the argument alone, since it runs again, and must accept
// again, each time the history that accepted the update is replayed.
func WithValidator[In any](fn func(in In) error) UpdateOption[In] {
	return UpdateOption[In]{validate: fn}
}

// HandleUpdate registers fn as the handler of the update name for this
// instance: a client's durabox update ID NAME (or the HTTP API's POST
// /v1/instances/{id}/updates/{name}) runs it with its argument, decoded
// from JSON into In, and gets its answer, encoded to JSON, or its error,
// on the same call. Registering a name again replaces its handler.
//
// An update changes the instance: it is recorded in history
// (UpdateAccepted, then UpdateCompleted with the answer) and replayed
// exactly like everything else. The handler runs as a branch of the
// orchestration (see Go), from the step that delivers the update: it may
// call activities, sleep, wait and start children through ctx, and read
// and write the orchestration's variables; its answer is recorded once it
// returns. A handler that panics answers the update with the panic as its
// error; the instance goes on. An update the instance has no handler for
// is refused, as is one its validator (WithValidator) refuses: neither
// leaves a trace. The orchestration's end, or its continuing as new,
// answers the updates whose handlers have not returned with an error:
// wait for them first with ctx.Await(ctx.AllHandlersFinished).
//
// It panics, failing the instance, if name is not a name a host takes
// (see "Names, texts and JSON" in the package doc).
//
//	durabox.HandleUpdate(ctx, "AddItem", func(ctx *durabox.Context, item Item) (int, error) {
//		if _, err := durabox.Call[string](ctx, "Reserve", item); err != nil {
//			return 0, err
//		}
//		items = append(items, item)
//		return len(items), nil
//	}, durabox.WithValidator(func(item Item) error {
//		if item.Qty < 1 {
//			return errors.New("a quantity of at least 1")
//		}
//		return nil
//	}))
func HandleUpdate[In, Out any](ctx *Context, name string, fn func(ctx *Context, in In) (Out, error), opts ...UpdateOption[In]) {
	rt := ctx.rt
	rt.own("durabox.HandleUpdate")
	if err := abi.CheckName("update name", name); err != nil {
		panic("durabox: " + err.Error())
	}
	h := &updateHandler{run: seam.Adapt("update", name, fn)}
	for _, o := range opts {
		if o.validate == nil {
			continue
		}
		check := seam.Adapt("update", name, func(_ struct{}, in In) (struct{}, error) { return struct{}{}, o.validate(in) })
		h.validate = func(input []byte) error {
			_, err := check(struct{}{}, input)
			return err
		}
	}
	rt.updates[name] = h
}

// result is the answer to an activation whose commands are cmds.
func (rt *runtime) result(cmds []abi.Command) *abi.ActivationResult {
	return &abi.ActivationResult{Commands: cmds, HandlesUpdates: len(rt.updates) > 0 && !rt.sched.ended}
}

// AllHandlersFinished reports whether every update handler that began has
// returned. An orchestration that ends or continues as new answers the
// updates whose handlers run with an error; to let them finish first:
//
//	if err := ctx.Await(ctx.AllHandlersFinished); err != nil { … }
//	return nil, ctx.ContinueAsNew(state)
func (c *Context) AllHandlersFinished() bool {
	return c.rt.handlersRunning == 0
}

// handlerUnits numbers the units of update handlers after every branch
// the orchestration's root could start, so that they run after those in a
// round, in the order the updates came.
const handlerUnits = 1 << 40

// update applies the delivery of an update: it refuses it when the
// instance has no handler of its name or the handler's validator refuses
// it, and otherwise starts the handler, as a unit of its own.
func (rt *runtime) update(j abi.Job) {
	h, ok := rt.updates[j.Name]
	if !ok {
		rt.refuse(j.UpdateID, &abi.Failure{Message: fmt.Sprintf("durabox: the instance handles no update %q (it handles %v)", j.Name, sortedNames(rt.updates))})
		return
	}
	if h.validate != nil {
		what := fmt.Sprintf("the validator of update %q", j.Name)
		if _, details, err := rt.readOnly(what, "a validator", func() ([]byte, error) { return nil, h.validate(j.Input) }); err != nil {
			rt.refuse(j.UpdateID, &abi.Failure{Message: err.Error(), Details: details})
			return
		}
	}
	id, name := j.UpdateID, j.Name
	ctx := &Context{rt: rt}
	rt.handlersRunning++
	rt.sched.spawnAs([]int{handlerUnits + rt.handlersBegun}, rt.guard("panic in the handler of update "+name, func() {
		out, failure := rt.runHandler(name, func() ([]byte, error) { return h.run(ctx, j.Input) })
		rt.handlersRunning--
		rt.command(abi.Command{Kind: abi.CommandCompleteUpdate, UpdateID: id, Output: out, Failure: failure})
	}))
	rt.handlersBegun++
}

// runHandler runs the handler of the update name, turning its error, or
// a panic, into the update's failure.
func (rt *runtime) runHandler(name string, run func() ([]byte, error)) (out []byte, failure *abi.Failure) {
	defer func() {
		if r := recover(); r != nil {
			out, failure = nil, &abi.Failure{Message: fmt.Sprintf("durabox: panic in the handler of update %q: %v", name, r), Details: string(debug.Stack())}
		}
	}()
	out, err := run()
	if err == nil {
		return out, nil
	}
	failure = &abi.Failure{Message: err.Error()}
	var ae *ActivityError
	if errors.As(err, &ae) {
		failure.Details = ae.Details
	}
	return nil, failure
}

// refuse emits the refusal of update id, for failure: the activation's
// only command (the host records nothing of it, and runs the step again
// without the update on a fresh instance).
func (rt *runtime) refuse(id string, failure *abi.Failure) {
	rt.refused = true
	rt.command(abi.Command{Kind: abi.CommandRejectUpdate, UpdateID: id, Failure: failure})
}
