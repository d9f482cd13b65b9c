// Command retry is the retry loop of the durable-futures walkthrough: call a
// flaky activity, and after each failure wait on a durable timer before the
// next attempt.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Retry", Retry)
	durabox.RegisterActivity("FlakyTask", FlakyTask)
}

// RetryInput configures a run.
type RetryInput struct {
	// Attempts is how many times to call FlakyTask at most (default 3).
	Attempts int `json:"attempts"`
	// Failures is how many attempts fail before one succeeds.
	Failures int `json:"failures"`
	// Delay is the wait between attempts, as a Go duration (default "1s").
	Delay string `json:"delay"`
	// WorkMillis makes each attempt take that long, to have one in flight.
	WorkMillis int `json:"workMillis"`
}

// Attempt is FlakyTask's input.
type Attempt struct {
	Number     int `json:"number"`
	Failures   int `json:"failures"`
	WorkMillis int `json:"workMillis"`
}

// Retry calls FlakyTask until it succeeds or the attempts run out.
func Retry(ctx *durabox.Context, in RetryInput) (string, error) {
	if in.Attempts == 0 {
		in.Attempts = 3
	}
	delay := time.Second
	if in.Delay != "" {
		d, err := time.ParseDuration(in.Delay)
		if err != nil {
			return "", fmt.Errorf("delay %q is not a duration such as 1s or 250ms", in.Delay)
		}
		delay = d
	}
	for n := 1; n <= in.Attempts; n++ {
		out, err := durabox.Call[string](ctx, "FlakyTask", Attempt{Number: n, Failures: in.Failures, WorkMillis: in.WorkMillis})
		if err == nil {
			return out, nil
		}
		if n < in.Attempts {
			if err := ctx.Sleep(delay); err != nil {
				return "", err
			}
		}
	}
	// Logged at error, so a host at --log-level warn still shows it.
	ctx.Logger().Error("all attempts failed", "attempts", in.Attempts)
	return "", fmt.Errorf("all %d attempts failed", in.Attempts)
}

// FlakyTask fails its first a.Failures attempts.
func FlakyTask(ctx context.Context, a Attempt) (string, error) {
	if info, ok := durabox.ActivityInfoFrom(ctx); ok {
		fmt.Printf("FlakyTask attempt %d starting (delivery %d)\n", a.Number, info.Attempt)
	}
	time.Sleep(time.Duration(a.WorkMillis) * time.Millisecond)
	if a.Number <= a.Failures {
		durabox.ActivityLogger().Warn("FlakyTask fails on purpose", "attempt", a.Number)
		return "", fmt.Errorf("attempt %d failed on purpose", a.Number)
	}
	return fmt.Sprintf("succeeded on attempt %d", a.Number), nil
}

func main() {}
