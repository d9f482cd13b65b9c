package durabox

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/durabox/durabox/abi"
)

// ActivityInfo describes the activity attempt running; read it with
// ActivityInfoFrom in activity code.
type ActivityInfo struct {
	// Name is the activity's name.
	Name string
	// InstanceID is the orchestration instance that called it.
	InstanceID string
	// Attempt counts the attempts of this call, from 1: each retry its
	// policy made (WithRetry) and each delivery again after a crash adds
	// one. An attempt above 1 means an earlier one may have run, in part
	// or whole: activities run at least once, so make them idempotent.
	Attempt int
}

type activityInfoKey struct{}

// ActivityInfoFrom returns the information about the running activity
// attempt that ctx carries, if any.
func ActivityInfoFrom(ctx context.Context) (ActivityInfo, bool) {
	info, ok := ctx.Value(activityInfoKey{}).(ActivityInfo)
	return info, ok
}

// runActivity runs one attempt of the activity the module registers under
// req.Name and reports its outcome.
func runActivity(req *abi.ActivityRequest) *abi.ActivityResult {
	fn, ok := activities[req.Name]
	if !ok {
		return &abi.ActivityResult{Failure: &abi.Failure{
			Message: fmt.Sprintf("this module registers no activity %q (it registers %v)", req.Name, sortedNames(activities)),
		}}
	}
	return callActivity(req, fn)
}

// callActivity runs fn as one attempt of the activity req describes. A
// panic in the activity fails the attempt with the panic's message and
// stack.
func callActivity(req *abi.ActivityRequest, fn activityFunc) (res *abi.ActivityResult) {
	defer func() {
		if r := recover(); r != nil {
			res = &abi.ActivityResult{Failure: &abi.Failure{Message: fmt.Sprintf("panic: %v", r), Details: string(debug.Stack())}}
		}
	}()
	info := ActivityInfo{Name: req.Name, InstanceID: req.InstanceID, Attempt: int(req.Attempt)}
	out, err := fn(context.WithValue(context.Background(), activityInfoKey{}, info), req.Input)
	if err != nil {
		return &abi.ActivityResult{Failure: &abi.Failure{Message: err.Error(), Type: ErrorType(err)}}
	}
	return &abi.ActivityResult{Output: out}
}

// manifest describes what the module registers.
func manifest() *abi.Manifest {
	return &abi.Manifest{SDK: sdkName, Orchestrations: sortedNames(orchestrations), Activities: sortedNames(activities), Updates: true}
}
