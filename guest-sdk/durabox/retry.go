package durabox

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
)

// RetryPolicy says how to retry a failing activity: give it to one call
// with WithRetry, or to every call of the module with DefaultRetryPolicy,
// and the host retries (history records the call's one outcome); or to
// CallWithRetry, and the orchestration does (history records every
// attempt and every wait). The zero value means a single attempt.
type RetryPolicy struct {
	// MaxAttempts is how many attempts to make at most, the first
	// included (0 or 1: one).
	MaxAttempts int
	// InitialInterval is the wait before the second attempt (0: none).
	InitialInterval time.Duration
	// BackoffCoefficient multiplies the wait after each attempt (0: 2;
	// otherwise at least 1).
	BackoffCoefficient float64
	// MaxInterval caps the wait between attempts (0: no cap; with
	// WithRetry, the host caps every wait at a year).
	MaxInterval time.Duration
	// NonRetryableErrors are the error types (NewError) that end the call
	// at their first failure, attempts left or not. WithRetry and
	// DefaultRetryPolicy only: CallWithRetry retries every failure.
	NonRetryableErrors []string
}

// wire is the policy as a ScheduleActivity command carries it, or an error
// that says what is wrong with it, in terms of option (the function it was
// given to).
func (p RetryPolicy) wire(option string) (*abi.RetryPolicy, error) {
	bad := func(format string, args ...any) (*abi.RetryPolicy, error) {
		return nil, fmt.Errorf("durabox: %s: "+format, append([]any{option}, args...)...)
	}
	switch {
	case p.MaxAttempts < 0 || int64(p.MaxAttempts) > math.MaxUint32:
		return bad("MaxAttempts is %d; it must be 0 or more (0 and 1 both make one attempt)", p.MaxAttempts)
	case p.InitialInterval < 0:
		return bad("InitialInterval is %s; it must not be negative", p.InitialInterval)
	case p.MaxInterval < 0:
		return bad("MaxInterval is %s; it must not be negative (0: no cap)", p.MaxInterval)
	case math.IsNaN(p.BackoffCoefficient) || math.IsInf(p.BackoffCoefficient, 0) || p.BackoffCoefficient != 0 && p.BackoffCoefficient < 1:
		return bad("BackoffCoefficient is %g; it must be at least 1 (or 0 for the default, 2)", p.BackoffCoefficient)
	case p.BackoffCoefficient > 1e6:
		return bad("BackoffCoefficient is %g; it must be at most 1000000", p.BackoffCoefficient)
	}
	w := &abi.RetryPolicy{MaximumAttempts: uint32(p.MaxAttempts), InitialIntervalMillis: millisUp(p.InitialInterval),
		BackoffThousandths: uint64(math.Round(p.BackoffCoefficient * 1000)), MaximumIntervalMillis: millisUp(p.MaxInterval), NonRetryable: slices.Clone(p.NonRetryableErrors)}
	if err := abi.CheckRetryPolicy(w); err != nil {
		return bad("%v", err)
	}
	return w, nil
}

// millisUp rounds d up to whole milliseconds.
func millisUp(d time.Duration) uint64 { return uint64((d + time.Millisecond - 1) / time.Millisecond) }

// WithRetry has the host retry this activity call as p says: an attempt
// that fails (its error, its deadline, a crash of its sandbox) is followed
// by another after p's wait, until one succeeds, p.MaxAttempts have been
// made, or the error's type is one of p.NonRetryableErrors. History
// records the call once, with one outcome: the result, or the last
// failure, whose *ActivityError names the attempts. It replaces the
// module's default (DefaultRetryPolicy); WithRetry(RetryPolicy{}) makes
// one attempt.
func WithRetry(p RetryPolicy) CallOption {
	return CallOption{func(name string, cmd *abi.Command) error {
		w, err := p.wire(fmt.Sprintf("WithRetry for activity %q", name))
		cmd.Retry = w
		return err
	}}
}

// defaultRetry is the retry policy of the calls that set none
// (DefaultRetryPolicy); nil: one attempt.
var defaultRetry *abi.RetryPolicy

// DefaultRetryPolicy sets the retry policy of every activity call of this
// module that does not set one with WithRetry; call it in init. It panics,
// saying why, on a policy WithRetry would refuse. CallWithRetry's calls
// get it too, so each of its attempts is then retried by the host.
func DefaultRetryPolicy(p RetryPolicy) {
	w, err := p.wire("DefaultRetryPolicy")
	if err != nil {
		panic(err.Error())
	}
	defaultRetry = w
}

// interval returns the wait after attempt n (from 1).
func (p RetryPolicy) interval(n int) time.Duration {
	coefficient := p.BackoffCoefficient
	if coefficient == 0 {
		coefficient = 2
	}
	d := float64(p.InitialInterval)
	for range n - 1 {
		d *= coefficient
	}
	if p.MaxInterval > 0 && d > float64(p.MaxInterval) {
		return p.MaxInterval
	}
	return time.Duration(d)
}

// RetriesExhaustedError is the error of an activity call whose every attempt
// failed. It unwraps to the last attempt's *ActivityError.
type RetriesExhaustedError struct {
	Attempts int
	Last     *ActivityError
}

func (e *RetriesExhaustedError) Error() string {
	return fmt.Sprintf("%s (after %d attempts)", e.Last.Error(), e.Attempts)
}

func (e *RetriesExhaustedError) Unwrap() error { return e.Last }

// CallWithRetry calls the activity name with input until an attempt
// succeeds or policy's attempts run out, waiting on a durable timer between
// attempts: each attempt and each wait is in history. Only activity failures
// are retried. opts apply to every attempt, as for CallActivity.
func CallWithRetry[T any](ctx *Context, policy RetryPolicy, name string, input any, opts ...CallOption) (T, error) {
	attempts := max(policy.MaxAttempts, 1)
	for n := 1; ; n++ {
		out, err := Call[T](ctx, name, input, opts...)
		var failed *ActivityError
		if err == nil || !errors.As(err, &failed) {
			return out, err
		}
		if n == attempts {
			return out, &RetriesExhaustedError{Attempts: n, Last: failed}
		}
		if err := ctx.Sleep(policy.interval(n)); err != nil {
			return out, err
		}
	}
}
