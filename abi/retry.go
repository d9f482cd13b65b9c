package abi

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxRetryInterval bounds a retry policy's intervals.
const MaxRetryInterval = 365 * 24 * time.Hour

// MaxNonRetryable bounds how many error types a retry policy lists as not
// to retry.
const MaxNonRetryable = 64

// CheckRetryPolicy returns an error, saying what is wrong and what would
// do, unless the host can follow p: its backoff coefficient is 0 (the
// default, 2000) or at least 1000, its intervals are at most
// MaxRetryInterval and the maximum is not under the initial one, and it
// lists at most MaxNonRetryable error types, each a name (CheckName).
func CheckRetryPolicy(p *RetryPolicy) error {
	maxMillis := uint64(MaxRetryInterval / time.Millisecond)
	switch {
	case p.BackoffThousandths != 0 && p.BackoffThousandths < 1000:
		return fmt.Errorf("retry policy: the backoff coefficient is %s; it must be at least 1 (or 0 for the default, 2)", thousandths(p.BackoffThousandths))
	case p.InitialIntervalMillis > maxMillis:
		return fmt.Errorf("retry policy: the initial interval is %s; it must be at most %s", millis(p.InitialIntervalMillis), MaxRetryInterval)
	case p.MaximumIntervalMillis > maxMillis:
		return fmt.Errorf("retry policy: the maximum interval is %s; it must be at most %s", millis(p.MaximumIntervalMillis), MaxRetryInterval)
	case p.MaximumIntervalMillis != 0 && p.MaximumIntervalMillis < p.InitialIntervalMillis:
		return fmt.Errorf("retry policy: the maximum interval (%s) is under the initial one (%s); raise it, or leave it 0 for no cap",
			millis(p.MaximumIntervalMillis), millis(p.InitialIntervalMillis))
	case len(p.NonRetryable) > MaxNonRetryable:
		return fmt.Errorf("retry policy: it lists %d non-retryable error types; at most %d may be listed", len(p.NonRetryable), MaxNonRetryable)
	}
	for _, t := range p.NonRetryable {
		if err := CheckName("non-retryable error type", t); err != nil {
			return fmt.Errorf("retry policy: %w", err)
		}
	}
	return nil
}

// millis formats a number of milliseconds as a duration, without
// overflowing one.
func millis(ms uint64) string {
	if ms > uint64(math.MaxInt64/time.Millisecond) {
		return fmt.Sprintf("%dms", ms)
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// thousandths formats a coefficient in thousandths as a decimal: 1500 is
// 1.5.
func thousandths(v uint64) string { return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64) }
