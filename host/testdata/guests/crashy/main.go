// Command crashy is a guest whose orchestrations fail in the ways a guest
// can: a panic, a deadlock, a blocking sleep, and an activity that panics.
// Its Version orchestration reports the module's version (set at link time),
// to show which module an instance runs on.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

var version = "v1"

func init() {
	durabox.RegisterOrchestration("Sleeps", func(ctx *durabox.Context, _ any) (string, error) {
		time.Sleep(10 * time.Millisecond)
		return "woke", nil
	})
	durabox.RegisterOrchestration("Version", func(ctx *durabox.Context, wait string) (string, error) {
		d, err := time.ParseDuration(wait)
		if err != nil {
			return "", err
		}
		if err := ctx.Sleep(d); err != nil {
			return "", err
		}
		return durabox.Call[string](ctx, "Version", nil)
	})
	durabox.RegisterActivity("Version", func(context.Context, any) (string, error) { return version, nil })
	durabox.RegisterOrchestration("Panic", func(ctx *durabox.Context, msg string) (string, error) {
		panic(msg)
	})
	durabox.RegisterOrchestration("Deadlock", func(ctx *durabox.Context, _ any) (string, error) {
		never := make(chan int)
		go func() { <-never }()
		<-never
		return "", nil
	})
	durabox.RegisterOrchestration("CallPanickyActivity", func(ctx *durabox.Context, _ any) (string, error) {
		return durabox.Call[string](ctx, "PanickyActivity", nil)
	})
	durabox.RegisterOrchestration("Echo", func(ctx *durabox.Context, s string) (string, error) {
		return durabox.Call[string](ctx, "Echo", s)
	})
	durabox.RegisterActivity("PanickyActivity", func(context.Context, any) (string, error) {
		panic(errors.New("activity went wrong"))
	})
	durabox.RegisterActivity("Echo", func(_ context.Context, s string) (string, error) { return s, nil })
}

func main() {}
