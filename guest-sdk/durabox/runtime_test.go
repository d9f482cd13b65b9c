package durabox

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func init() {
	RegisterOrchestration("Greet", func(ctx *Context, name string) (string, error) {
		return Call[string](ctx, "Hello", name)
	})
	RegisterOrchestration("Clock", func(ctx *Context, _ any) ([]string, error) {
		before := ctx.Now().Format(time.RFC3339)
		if err := ctx.Sleep(time.Minute); err != nil {
			return nil, err
		}
		return []string{before, ctx.Now().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)}, nil
	})
	RegisterOrchestration("Timed", func(ctx *Context, d time.Duration) (string, error) {
		return Call[string](ctx, "Hello", "timed", WithTimeout(d))
	})
	RegisterOrchestration("Counter", func(ctx *Context, n int) (int, error) {
		if n < 3 {
			return 0, ctx.ContinueAsNew(n + 1)
		}
		return n, nil
	})
	RegisterOrchestration("Panics", func(ctx *Context, _ any) (any, error) {
		var m map[string]int
		m["x"] = 1
		return nil, nil
	})
	RegisterActivity("Hello", func(_ context.Context, name string) (string, error) {
		if name == "" {
			return "", errors.New("no name")
		}
		if name == "panic" {
			panic("hello panicked")
		}
		return "Hello, " + name, nil
	})
}

func start(name, input string) abi.Job {
	return abi.Job{Kind: abi.JobStart, Name: name, InstanceID: "i1", Input: []byte(input)}
}

func activation(sec int64, jobs ...abi.Job) *abi.Activation {
	return &abi.Activation{Time: time.Unix(sec, 0).UnixNano(), Jobs: jobs}
}

func TestActivityCallAndResult(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	got := rt.activate(activation(0, start("Greet", `"world"`)))
	want := []abi.Command{{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Hello", Input: []byte(`"world"`)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("first activation: %+v", got)
	}
	got = rt.activate(activation(1, abi.Job{Kind: abi.JobResolveActivity, Seq: 1, Result: []byte(`"Hello, world"`)}))
	want = []abi.Command{{Kind: abi.CommandComplete, Seq: 2, Output: []byte(`"Hello, world"`)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("second activation: %+v", got)
	}
}

func TestWithTimeoutIsInTheCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		timeout time.Duration
		want    []abi.Command
	}{
		{30 * time.Second, []abi.Command{{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Hello", Input: []byte(`"timed"`), TimeoutMillis: 30000}}},
		{time.Microsecond, []abi.Command{{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Hello", Input: []byte(`"timed"`), TimeoutMillis: 1}}},
		{-time.Second, []abi.Command{{Kind: abi.CommandFail, Seq: 1, Failure: &abi.Failure{
			Message: `durabox: WithTimeout(-1s) for activity "Hello": the duration must be positive (leave the option out for the host's default)`}}}},
	}
	for _, tt := range tests {
		got := newRuntime().activate(activation(0, start("Timed", fmt.Sprint(int64(tt.timeout)))))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("WithTimeout(%s): %+v, want %+v", tt.timeout, got, tt.want)
		}
	}
}

func TestActivityFailureFailsTheOrchestration(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	rt.activate(activation(0, start("Greet", `""`)))
	got := rt.activate(activation(1, abi.Job{Kind: abi.JobResolveActivity, Seq: 1, Failure: &abi.Failure{Message: "no name"}}))
	want := []abi.Command{{Kind: abi.CommandFail, Seq: 2, Failure: &abi.Failure{Message: `activity "Hello" failed: no name`}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
}

func TestTimerAndLogicalClock(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	got := rt.activate(activation(100, start("Clock", `null`)))
	if len(got) != 1 || got[0].Kind != abi.CommandStartTimer || got[0].Delay != int64(time.Minute) {
		t.Fatalf("first activation: %+v", got)
	}
	got = rt.activate(activation(160, abi.Job{Kind: abi.JobFireTimer, Seq: 1}))
	if len(got) != 1 || got[0].Kind != abi.CommandComplete {
		t.Fatalf("second activation: %+v", got)
	}
	// time.Now is the host's clock when natively tested; only the first two
	// values are the SDK's own.
	if !strings.HasPrefix(string(got[0].Output), `["1970-01-01T00:01:40Z","1970-01-01T00:02:40Z",`) {
		t.Fatalf("output %s", got[0].Output)
	}
}

func TestPanicFailsTheOrchestrationWithItsStack(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	got := rt.activate(activation(0, start("Panics", `null`)))
	if len(got) != 1 || got[0].Kind != abi.CommandFail {
		t.Fatalf("got %+v", got)
	}
	if msg := got[0].Failure.Message; msg != "panic: assignment to entry in nil map" {
		t.Errorf("message %q", msg)
	}
	if !strings.Contains(got[0].Failure.Details, "runtime_test.go") {
		t.Errorf("details do not show the orchestration's stack:\n%s", got[0].Failure.Details)
	}
}

func TestUnknownOrchestration(t *testing.T) {
	t.Parallel()
	got := newRuntime().activate(activation(0, start("Nope", `null`)))
	if len(got) != 1 || got[0].Kind != abi.CommandFail || !strings.HasPrefix(got[0].Failure.Message, `durabox: this module registers no orchestration "Nope" (it registers [`) {
		t.Fatalf("got %+v", got)
	}
}

func TestBadInputFailsTheOrchestration(t *testing.T) {
	t.Parallel()
	got := newRuntime().activate(activation(0, start("Greet", `42`)))
	if len(got) != 1 || got[0].Kind != abi.CommandFail || !strings.HasPrefix(got[0].Failure.Message, `orchestration "Greet": input 42 does not decode into string`) {
		t.Fatalf("got %+v", got)
	}
}

func TestRunActivity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, activity, input string
		wantOutput, wantError string
	}{
		{"success", "Hello", `"Ada"`, `"Hello, Ada"`, ""},
		{"error", "Hello", `""`, "", "no name"},
		{"panic", "Hello", `"panic"`, "", "panic: hello panicked"},
		{"unknown", "Nope", `null`, "", `this module registers no activity "Nope" (it registers [Hello])`},
		{"bad input", "Hello", `{}`, "", `activity "Hello": input {} does not decode into string: json: cannot unmarshal object into Go value of type string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runActivity(&abi.ActivityRequest{Name: tt.activity, Input: []byte(tt.input), Attempt: 1})
			if string(res.Output) != tt.wantOutput {
				t.Errorf("output %s, want %s", res.Output, tt.wantOutput)
			}
			msg := ""
			if res.Failure != nil {
				msg = res.Failure.Message
			}
			if msg != tt.wantError {
				t.Errorf("error %q, want %q", msg, tt.wantError)
			}
		})
	}
}

func TestManifestListsRegistrations(t *testing.T) {
	t.Parallel()
	m := manifest()
	if !reflect.DeepEqual(m.Orchestrations, []string{"Abandons", "BranchRace", "Cancellable", "Charge", "Clock", "Counter", "Greet", "Guids", "LockCancelled", "Loop", "NamesChildren", "Panics", "Parallel", "PlainGo", "Race", "Retried", "Retrying", "Scopes", "Stops", "Timed"}) || !reflect.DeepEqual(m.Activities, []string{"Hello"}) {
		t.Fatalf("manifest %+v", m)
	}
}

func TestContinueAsNew(t *testing.T) {
	t.Parallel()
	got := newRuntime().activate(activation(0, start("Counter", `1`)))
	want := []abi.Command{{Kind: abi.CommandContinueAsNew, Seq: 1, Output: []byte(`2`)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	got = newRuntime().activate(activation(0, start("Counter", `3`)))
	if len(got) != 1 || got[0].Kind != abi.CommandComplete || string(got[0].Output) != `3` {
		t.Fatalf("got %+v", got)
	}
}

func init() {
	// NamesChildren starts a detached instance and a child under the ids
	// it is given, and fails with the first error.
	RegisterOrchestration("NamesChildren", func(ctx *Context, ids [2]string) (string, error) {
		if err := ctx.StartDetached("Kid", nil, ids[0]); err != nil {
			return "", err
		}
		return "", ctx.CallChild("Kid", nil, ids[1]).Get(nil)
	})
}

// TestAChildIDChosenMustBeValid: an id the orchestration gives a child
// must be one a client could choose; another is refused at once, without
// a command, naming what is wrong.
func TestAChildIDChosenMustBeValid(t *testing.T) {
	t.Parallel()
	const rule = "; an instance id is 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
	for _, tt := range []struct {
		ids  string
		want []abi.Command
	}{
		{`["audit-1", "kid-1"]`, []abi.Command{
			{Kind: abi.CommandStartChild, Seq: 1, Name: "Kid", Input: []byte(`null`), InstanceID: "audit-1", Detached: true},
			{Kind: abi.CommandStartChild, Seq: 2, Name: "Kid", Input: []byte(`null`), InstanceID: "kid-1"},
		}},
		{`["audit~1:2", "kid-1"]`, []abi.Command{{Kind: abi.CommandFail, Seq: 1, Failure: &abi.Failure{
			Message: `durabox: child orchestration "Kid" cannot start: abi: instance id "audit~1:2" has '~', which only ids the host derives have` + rule}}}},
		{`["audit-1", "kid 1"]`, []abi.Command{
			{Kind: abi.CommandStartChild, Seq: 1, Name: "Kid", Input: []byte(`null`), InstanceID: "audit-1", Detached: true},
			{Kind: abi.CommandFail, Seq: 2, Failure: &abi.Failure{Message: `durabox: child orchestration "Kid" cannot start: abi: instance id "kid 1" has ' '` + rule}},
		}},
	} {
		got := newRuntime().activate(activation(0, start("NamesChildren", tt.ids)))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ids %s: commands %+v, want %+v", tt.ids, got, tt.want)
		}
	}
}
