package durabox

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func init() {
	RegisterOrchestration("Retried", func(ctx *Context, p RetryPolicy) (string, error) {
		out, err := Call[string](ctx, "Hello", "retried", WithRetry(p))
		if ae, ok := err.(*ActivityError); ok {
			return fmt.Sprintf("%d attempts, type %q: %v", ae.Attempts, ae.Type, ae), nil
		}
		return out, err
	})
}

// TestWithRetryIsInTheCommand: a call's retry policy travels in its
// command, its durations in whole milliseconds (rounded up) and its
// coefficient in thousandths; a policy the host could not follow fails
// the orchestration, saying why.
func TestWithRetryIsInTheCommand(t *testing.T) {
	t.Parallel()
	command := func(p *abi.RetryPolicy) []abi.Command {
		return []abi.Command{{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Hello", Input: []byte(`"retried"`), Retry: p}}
	}
	failed := func(msg string) []abi.Command {
		return []abi.Command{{Kind: abi.CommandFail, Seq: 1, Failure: &abi.Failure{Message: msg}}}
	}
	tests := []struct {
		name   string
		policy RetryPolicy
		want   []abi.Command
	}{
		{"a full policy", RetryPolicy{MaxAttempts: 4, InitialInterval: 1500 * time.Microsecond, BackoffCoefficient: 1.5, MaxInterval: time.Minute, NonRetryableErrors: []string{"CardDeclined"}},
			command(&abi.RetryPolicy{MaximumAttempts: 4, InitialIntervalMillis: 2, BackoffThousandths: 1500, MaximumIntervalMillis: 60000, NonRetryable: []string{"CardDeclined"}})},
		{"the zero policy: one attempt", RetryPolicy{}, command(&abi.RetryPolicy{})},
		{"negative attempts", RetryPolicy{MaxAttempts: -1},
			failed(`durabox: WithRetry for activity "Hello": MaxAttempts is -1; it must be 0 or more (0 and 1 both make one attempt)`)},
		{"a coefficient under 1", RetryPolicy{MaxAttempts: 3, BackoffCoefficient: 0.5},
			failed(`durabox: WithRetry for activity "Hello": BackoffCoefficient is 0.5; it must be at least 1 (or 0 for the default, 2)`)},
		{"a maximum under the initial", RetryPolicy{MaxAttempts: 3, InitialInterval: time.Minute, MaxInterval: time.Second},
			failed(`durabox: WithRetry for activity "Hello": retry policy: the maximum interval (1s) is under the initial one (1m0s); raise it, or leave it 0 for no cap`)},
		{"an empty error type", RetryPolicy{MaxAttempts: 3, NonRetryableErrors: []string{""}},
			failed(`durabox: WithRetry for activity "Hello": retry policy: non-retryable error type "" is empty: a name is 1 to 256 bytes of UTF-8 without control characters`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := json.Marshal(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			got := newRuntime().activate(activation(0, start("Retried", string(in))))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", describe(got), describe(tt.want))
			}
		})
	}
}

// TestDefaultRetryPolicy: the module's default policy is in every call
// that sets none, and WithRetry replaces it. Not parallel: it sets the
// module's default, which the other tests run without.
func TestDefaultRetryPolicy(t *testing.T) {
	DefaultRetryPolicy(RetryPolicy{MaxAttempts: 5, InitialInterval: time.Second})
	t.Cleanup(func() { defaultRetry = nil })
	got := newRuntime().activate(activation(0, start("Greet", `"world"`)))
	want := &abi.RetryPolicy{MaximumAttempts: 5, InitialIntervalMillis: 1000}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Retry, want) {
		t.Fatalf("got %+v; want a ScheduleActivity with the default policy %+v", describe(got), want)
	}
	got = newRuntime().activate(activation(0, start("Retried", `{"MaxAttempts":2}`)))
	if want := (&abi.RetryPolicy{MaximumAttempts: 2}); len(got) != 1 || !reflect.DeepEqual(got[0].Retry, want) {
		t.Fatalf("got %+v; want the call's own policy %+v", describe(got), want)
	}
	defer func() {
		const want = "durabox: DefaultRetryPolicy: InitialInterval is -1s; it must not be negative"
		if r := recover(); r != want {
			t.Fatalf("DefaultRetryPolicy with a negative interval panicked with %v; want %q", r, want)
		}
	}()
	DefaultRetryPolicy(RetryPolicy{InitialInterval: -time.Second})
}

// TestActivityErrorNamesAttemptsAndType: the attempts and the error type
// the host reports reach the orchestration's *ActivityError, and an
// activity's *Error names its type in its failure.
func TestActivityErrorNamesAttemptsAndType(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	rt.activate(activation(0, start("Retried", `{"MaxAttempts":3}`)))
	got := rt.activate(activation(1, abi.Job{Kind: abi.JobResolveActivity, Seq: 1, Attempts: 3, Failure: &abi.Failure{Message: "busy", Type: "Busy"}}))
	want := []abi.Command{{Kind: abi.CommandComplete, Seq: 2, Output: []byte(`"3 attempts, type \"Busy\": activity \"Hello\" failed: busy (after 3 attempts)"`)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", describe(got), describe(want))
	}
	declines := func(context.Context, []byte) ([]byte, error) {
		return nil, fmt.Errorf("charging: %w", NewError("CardDeclined", "the bank declined the card"))
	}
	res := callActivity(&abi.ActivityRequest{Name: "Declines", Input: []byte(`null`), Attempt: 1}, declines)
	if f := res.Failure; f == nil || f.Type != "CardDeclined" || f.Message != "charging: the bank declined the card" {
		t.Fatalf("failure %+v; want the wrapped message with type CardDeclined", f)
	}
}

// describe shows commands with their failures and policies, which %+v
// shows as pointers.
func describe(cmds []abi.Command) string {
	s := ""
	for _, c := range cmds {
		s += fmt.Sprintf("{%+v", c)
		if c.Failure != nil {
			s += fmt.Sprintf(" failure %+v", *c.Failure)
		}
		if c.Retry != nil {
			s += fmt.Sprintf(" retry %+v", *c.Retry)
		}
		s += "}"
	}
	return s
}
