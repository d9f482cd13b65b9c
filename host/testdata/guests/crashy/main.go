// Command crashy is a guest whose orchestrations fail in the ways a guest
// can: a panic, a deadlock, and an activity that panics.
package main

import (
	"context"
	"errors"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
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
