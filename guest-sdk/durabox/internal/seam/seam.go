// Package seam is where package durabox hands its runtime to its test kit,
// package durtest, which drives orchestrations natively (in go test, without
// wasm) with the host's replay engine. Package durabox fills the variables
// in an init function, in native builds only: a module built for wasm does
// not carry them. Nothing else may use them.
package seam

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/plainjson"
)

// Func is an activity on JSON: input in, output out.
type Func = func(ctx context.Context, input []byte) ([]byte, error)

var (
	// NewGuest returns a fresh orchestration runtime, the one a wasm
	// instance runs.
	NewGuest func() Guest
	// RunActivity runs one activity attempt as a wasm instance does: fn
	// when it is not nil, else the activity the module registers under
	// req.Name.
	RunActivity func(req *abi.ActivityRequest, fn Func) *abi.ActivityResult
	// Manifest returns what the module registers.
	Manifest func() *abi.Manifest
)

// Guest is an orchestration runtime, as its exports drive it in a wasm
// instance.
type Guest struct {
	// Activate applies an activation's jobs, runs the orchestration until
	// it is quiescent and returns the commands it emitted.
	Activate func(a *abi.Activation) *abi.ActivationResult
	// Query answers a query from the handlers registered so far.
	Query func(req *abi.QueryRequest) *abi.QueryResult
}

// Adapt turns fn, an orchestration or an activity (what) called name, into
// a function on JSON: the input is decoded into In (empty input decodes as
// null), the result encoded from Out.
func Adapt[C, In, Out any](what, name string, fn func(ctx C, input In) (Out, error)) func(ctx C, input []byte) ([]byte, error) {
	return func(ctx C, raw []byte) ([]byte, error) {
		var in In
		if len(raw) > 0 {
			if err := plainjson.Unmarshal(raw, &in); err != nil {
				return nil, fmt.Errorf("%s %q: input %s does not decode into %T: %w", what, name, raw, in, err)
			}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return plainjson.Marshal(out)
	}
}
