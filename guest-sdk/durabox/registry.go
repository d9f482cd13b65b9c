package durabox

import (
	"context"
	"fmt"
	"sort"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// orchestrationFunc runs an orchestration on JSON input and returns JSON.
type orchestrationFunc func(ctx *Context, input []byte) ([]byte, error)

// activityFunc runs an activity on JSON input and returns JSON.
type activityFunc func(ctx context.Context, input []byte) ([]byte, error)

var (
	orchestrations = map[string]orchestrationFunc{}
	activities     = map[string]activityFunc{}
)

// RegisterOrchestration registers fn as the orchestration called name. The
// input is decoded from JSON into In; the result is encoded to JSON. Call it
// from an init function. It panics if name is already registered, or is not
// a name a host takes (see "Names, texts and JSON" in the package doc).
func RegisterOrchestration[In, Out any](name string, fn func(ctx *Context, input In) (Out, error)) {
	checkName("orchestration", name, orchestrations[name] != nil)
	orchestrations[name] = seam.Adapt("orchestration", name, fn)
}

// RegisterActivity registers fn as the activity called name. Call it from an
// init function. It panics if name is already registered, or is not a name
// a host takes.
func RegisterActivity[In, Out any](name string, fn func(ctx context.Context, input In) (Out, error)) {
	checkName("activity", name, activities[name] != nil)
	activities[name] = seam.Adapt("activity", name, fn)
}

// checkName panics, saying why, unless name is a name a host takes for
// what it names (abi.CheckName), and not taken: a host would refuse the
// module at deploy.
func checkName(what, name string, taken bool) {
	if err := abi.CheckName(what+" name", name); err != nil {
		panic("durabox: " + err.Error())
	}
	if taken {
		panic(fmt.Sprintf("durabox: %s %q is registered twice", what, name))
	}
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
