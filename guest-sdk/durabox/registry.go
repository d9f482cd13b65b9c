package durabox

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
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
// from an init function. It panics if name is empty or already registered.
func RegisterOrchestration[In, Out any](name string, fn func(ctx *Context, input In) (Out, error)) {
	checkName("orchestration", name, orchestrations[name] != nil)
	orchestrations[name] = func(ctx *Context, raw []byte) ([]byte, error) {
		var in In
		if err := decode(raw, &in); err != nil {
			return nil, fmt.Errorf("orchestration %q: input %s does not decode into %T: %w", name, raw, in, err)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// RegisterActivity registers fn as the activity called name. Call it from an
// init function. It panics if name is empty or already registered.
func RegisterActivity[In, Out any](name string, fn func(ctx context.Context, input In) (Out, error)) {
	checkName("activity", name, activities[name] != nil)
	activities[name] = func(ctx context.Context, raw []byte) ([]byte, error) {
		var in In
		if err := decode(raw, &in); err != nil {
			return nil, fmt.Errorf("activity %q: input %s does not decode into %T: %w", name, raw, in, err)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

func checkName(what, name string, taken bool) {
	if name == "" {
		panic("durabox: an " + what + " needs a name")
	}
	if taken {
		panic(fmt.Sprintf("durabox: %s %q is registered twice", what, name))
	}
}

// decode decodes JSON into v; empty input decodes as null.
func decode(raw []byte, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
