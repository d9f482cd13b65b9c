package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
)

// RetryPolicy is how the host retries an activity call whose attempt
// failed (abi.RetryPolicy, as ActivityScheduled records it). The engine
// records it and compares it on replay; the host follows it (Next), and
// history holds one outcome of the call, after its last attempt, with the
// number of attempts (Event.Attempts).
type RetryPolicy struct {
	// MaximumAttempts is how many attempts at most, the first included;
	// 0 or 1: one.
	MaximumAttempts int64 `json:"maximumAttempts,omitempty"`
	// InitialIntervalMs is the wait, in milliseconds, between a failed
	// first attempt and the second; zero: none.
	InitialIntervalMs int64 `json:"initialIntervalMs,omitempty"`
	// BackoffThousandths is what each wait multiplies the one before by,
	// in thousandths; zero means 2000 (it doubles).
	BackoffThousandths int64 `json:"backoffThousandths,omitempty"`
	// MaximumIntervalMs caps each wait, in milliseconds; zero: no cap
	// (but abi.MaxRetryInterval).
	MaximumIntervalMs int64 `json:"maximumIntervalMs,omitempty"`
	// NonRetryable are the error types (Failure.Type) that end the call at
	// the first failure.
	NonRetryable []string `json:"nonRetryable,omitempty"`
}

// Next decides what follows the failed attempt number attempt (from 1)
// of a call with policy p, which failed with f: another attempt after
// wait (retry), or none, and the call fails with f. A nil policy retries
// nothing. A failure whose type p lists as non-retryable ends the call,
// as does the last attempt p allows. The wait after the nth failure is
// InitialIntervalMs × (BackoffThousandths/1000)ⁿ⁻¹, at most
// MaximumIntervalMs and at most abi.MaxRetryInterval.
func (p *RetryPolicy) Next(attempt int, f *Failure) (wait time.Duration, retry bool) {
	if p == nil || int64(attempt) >= p.MaximumAttempts || f != nil && f.Type != "" && slices.Contains(p.NonRetryable, f.Type) {
		return 0, false
	}
	limit := abi.MaxRetryInterval
	if p.MaximumIntervalMs > 0 {
		limit = min(limit, time.Duration(p.MaximumIntervalMs)*time.Millisecond)
	}
	coefficient := float64(p.BackoffThousandths) / 1000
	if p.BackoffThousandths == 0 {
		coefficient = 2
	}
	d := float64(time.Duration(p.InitialIntervalMs) * time.Millisecond)
	for range attempt - 1 {
		if d *= coefficient; d >= float64(limit) {
			return limit, true
		}
	}
	return max(min(time.Duration(d), limit), 0), true // 0: a stored policy with a negative interval
}

// retryPolicyFrom is the policy a ScheduleActivity command asks for, as
// ActivityScheduled records it; nil for none. checkCommand has checked
// its values, which fit an int64.
func retryPolicyFrom(p *abi.RetryPolicy) *RetryPolicy {
	if p == nil {
		return nil
	}
	return &RetryPolicy{MaximumAttempts: int64(p.MaximumAttempts), InitialIntervalMs: int64(p.InitialIntervalMillis),
		BackoffThousandths: int64(p.BackoffThousandths), MaximumIntervalMs: int64(p.MaximumIntervalMillis), NonRetryable: p.NonRetryable}
}

// sameRetry reports whether a command's policy is the one an event
// recorded.
func sameRetry(c *abi.RetryPolicy, ev *RetryPolicy) bool {
	p := retryPolicyFrom(c)
	if p == nil || ev == nil {
		return p == nil && ev == nil
	}
	return p.MaximumAttempts == ev.MaximumAttempts && p.InitialIntervalMs == ev.InitialIntervalMs && p.BackoffThousandths == ev.BackoffThousandths &&
		p.MaximumIntervalMs == ev.MaximumIntervalMs && slices.Equal(p.NonRetryable, ev.NonRetryable)
}

// String describes the policy for nondeterminism errors and Event.String,
// as in: retry up to 3 attempts, 1s ×2 at most 1m0s, not ["Declined"].
func (p *RetryPolicy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "retry up to %d attempts", max(p.MaximumAttempts, 1))
	coefficient := p.BackoffThousandths
	if coefficient == 0 {
		coefficient = 2000
	}
	fmt.Fprintf(&b, ", %s ×%g", time.Duration(p.InitialIntervalMs)*time.Millisecond, float64(coefficient)/1000)
	if p.MaximumIntervalMs > 0 {
		fmt.Fprintf(&b, " at most %s", time.Duration(p.MaximumIntervalMs)*time.Millisecond)
	}
	if len(p.NonRetryable) > 0 {
		fmt.Fprintf(&b, ", not %q", p.NonRetryable)
	}
	return b.String()
}

// describeAttempts says, for Event.String, how many attempts an
// activity's outcome came after, when its call had a retry policy.
func describeAttempts(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", after %d attempts", n)
}
