package durabox

import (
	"errors"
	"fmt"
	"time"
)

// RetryPolicy says how to retry a failing activity. The zero value means a
// single attempt.
type RetryPolicy struct {
	// MaxAttempts is how many attempts to make at most (0 or 1: one).
	MaxAttempts int
	// InitialInterval is the wait before the second attempt.
	InitialInterval time.Duration
	// BackoffCoefficient multiplies the wait after each attempt (0: 2).
	BackoffCoefficient float64
	// MaxInterval caps the wait between attempts (0: no cap).
	MaxInterval time.Duration
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
