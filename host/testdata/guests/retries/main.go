// Command retries calls activities with retry policies the host follows:
// its own (WithRetry) and the module's default (DefaultRetryPolicy).
// Its activity Flaky fails, with an error of type Busy, until the attempt
// its input names, Declines fails with an error of type Declined, and Slow
// outlives its deadline on its first attempt.
// The orchestrations report a failed call as their result: its attempts,
// its error type and its message.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	// Every call that sets no policy: three attempts, at once.
	durabox.DefaultRetryPolicy(durabox.RetryPolicy{MaxAttempts: 3})
	durabox.RegisterOrchestration("Hourly", func(ctx *durabox.Context, succeedOn int) (string, error) {
		return report(durabox.Call[string](ctx, "Flaky", succeedOn, durabox.WithRetry(durabox.RetryPolicy{
			MaxAttempts: 3, InitialInterval: time.Hour, BackoffCoefficient: 2, NonRetryableErrors: []string{"Declined"}})))
	})
	durabox.RegisterOrchestration("AtOnce", func(ctx *durabox.Context, succeedOn int) (string, error) {
		return report(durabox.Call[string](ctx, "Flaky", succeedOn, durabox.WithRetry(durabox.RetryPolicy{MaxAttempts: 3})))
	})
	durabox.RegisterOrchestration("Decline", func(ctx *durabox.Context, _ any) (string, error) {
		return report(durabox.Call[string](ctx, "Declines", nil, durabox.WithRetry(durabox.RetryPolicy{
			MaxAttempts: 5, NonRetryableErrors: []string{"Declined"}})))
	})
	durabox.RegisterOrchestration("ByDefault", func(ctx *durabox.Context, succeedOn int) (string, error) {
		return report(durabox.Call[string](ctx, "Flaky", succeedOn))
	})
	durabox.RegisterActivity("Flaky", func(ctx context.Context, succeedOn int) (string, error) {
		info, _ := durabox.ActivityInfoFrom(ctx)
		if info.Attempt < succeedOn {
			return "", durabox.NewError("Busy", fmt.Sprintf("busy on attempt %d", info.Attempt))
		}
		return fmt.Sprintf("done on attempt %d", info.Attempt), nil
	})
	// Impatient waits half an hour for a call whose retries are an hour
	// apart, then an hour more, and ends without its result.
	durabox.RegisterOrchestration("Impatient", func(ctx *durabox.Context, _ any) (string, error) {
		work := ctx.CallActivity("Flaky", 99, durabox.WithRetry(durabox.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Hour}))
		if ctx.Select(work, ctx.NewTimer(30*time.Minute)) == 0 {
			return durabox.Await[string](work)
		}
		return "gave up waiting", ctx.Sleep(time.Hour)
	})
	durabox.RegisterOrchestration("SlowFirst", func(ctx *durabox.Context, _ any) (string, error) {
		return report(durabox.Call[string](ctx, "Slow", nil, durabox.WithTimeout(100*time.Millisecond), durabox.WithRetry(durabox.RetryPolicy{MaxAttempts: 2})))
	})
	// Slow outlives any deadline on its first attempt, and returns at once
	// on the others.
	durabox.RegisterActivity("Slow", func(ctx context.Context, _ any) (string, error) {
		info, _ := durabox.ActivityInfoFrom(ctx)
		if info.Attempt == 1 {
			time.Sleep(time.Hour)
		}
		return fmt.Sprintf("done on attempt %d", info.Attempt), nil
	})
	durabox.RegisterActivity("Declines", func(context.Context, any) (string, error) {
		return "", durabox.NewError("Declined", "the card was declined")
	})
}

// report is the result of an orchestration whose call returned out, err.
func report(out string, err error) (string, error) {
	var failed *durabox.ActivityError
	if errors.As(err, &failed) {
		return fmt.Sprintf("failed after %d attempts (%s): %s", failed.Attempts, failed.Type, failed.Message), nil
	}
	return out, err
}

func main() {}
