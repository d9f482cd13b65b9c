package durabox

import (
	"fmt"
	"runtime/debug"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// queryFunc answers a query on JSON: its argument in, its answer out.
type queryFunc func(input []byte) ([]byte, error)

// HandleQuery registers fn as the handler of the query name for this
// instance: a client's durabox query ID NAME (or the HTTP API's
// /v1/instances/{id}/queries/{name}) runs it and gets its answer, encoded
// to JSON, or its error. The argument is decoded from JSON into In (no
// argument decodes as null). Registering a name again replaces its
// handler; the handlers registered before the orchestration returned
// still answer once it has ended.
//
// A query reads; it never changes the instance, and nothing of it is in
// history. So fn must only read the orchestration's variables (those its
// closure captures): it runs between two steps, while no orchestration
// code runs, and a host may run it on the instance it keeps in memory or
// on a fresh replay of its history, so what it changed would be seen by
// the later queries of one and not by the other. It may not use the
// orchestration's Context or its futures (schedule anything, wait, set
// the custom status, read ctx.Now…): a query whose handler tries fails,
// and the instance goes on untouched; so does one whose handler panics.
//
// It panics, failing the instance, if name is not a name a host takes
// (see "Names, texts and JSON" in the package doc).
//
//	progress := 0
//	durabox.HandleQuery(ctx, "Progress", func(struct{}) (int, error) { return progress, nil })
func HandleQuery[In, Out any](ctx *Context, name string, fn func(in In) (Out, error)) {
	rt := ctx.rt
	rt.own("durabox.HandleQuery")
	if err := abi.CheckName("query name", name); err != nil {
		panic("durabox: " + err.Error())
	}
	adapted := seam.Adapt("query", name, func(_ struct{}, in In) (Out, error) { return fn(in) })
	rt.queries[name] = func(input []byte) ([]byte, error) { return adapted(struct{}{}, input) }
}

// queryMisuse is the panic of an SDK function called while a query runs:
// it fails the query.
type queryMisuse struct{ what string }

// query answers the query name with input from the handlers registered so
// far, changing nothing the orchestration or a later step sees.
func (rt *runtime) query(name string, input []byte) *abi.QueryResult {
	res := &abi.QueryResult{Handlers: sortedNames(rt.queries), UpdateHandlers: sortedNames(rt.updates)}
	fn, ok := rt.queries[name]
	if !ok {
		res.Failure = &abi.Failure{Message: fmt.Sprintf("durabox: the instance handles no query %q", name)}
		return res
	}
	out, details, err := rt.readOnly(fmt.Sprintf("the handler of query %q", name), "a query", func() ([]byte, error) { return fn(input) })
	if err != nil {
		res.Failure = &abi.Failure{Message: err.Error(), Details: details}
		return res
	}
	res.Output = out
	return res
}

// readOnly runs fn, the code what (the handler of a query, the validator
// of an update: one kind of reader), where it may only read: a panic, or
// a call of the SDK (queryMisuse), becomes its error.
func (rt *runtime) readOnly(what, kind string, fn func() ([]byte, error)) (out []byte, details string, err error) {
	rt.querying = what
	defer func() {
		rt.querying = ""
		r := recover()
		if r == nil {
			return
		}
		out, details = nil, string(debug.Stack())
		if m, ok := r.(queryMisuse); ok {
			err = fmt.Errorf("durabox: %s called %s: %s only reads the orchestration's state, and may not use its Context or futures (nothing was scheduled; the instance goes on as before)", what, m.what, kind)
			return
		}
		err = fmt.Errorf("durabox: panic in %s: %v", what, r)
	}()
	out, err = fn()
	if err != nil {
		return nil, "", err
	}
	return out, "", nil
}
