// Command sizes is a guest whose orchestrations make payloads of the size
// their input says, each in its own way: a custom status, a result, an
// activity's input and an activity's result. The host must refuse every
// one past its payload limit, saying which and what the limit is.
package main

import (
	"context"
	"strings"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Status", func(ctx *durabox.Context, n int) (string, error) {
		ctx.SetCustomStatus(strings.Repeat("s", n))
		return "ok", nil
	})
	durabox.RegisterOrchestration("Result", func(ctx *durabox.Context, n int) (string, error) {
		return strings.Repeat("r", n), nil
	})
	durabox.RegisterOrchestration("ActivityInput", func(ctx *durabox.Context, n int) (int, error) {
		return durabox.Call[int](ctx, "Length", strings.Repeat("i", n))
	})
	durabox.RegisterOrchestration("ActivityResult", func(ctx *durabox.Context, n int) (int, error) {
		s, err := durabox.Call[string](ctx, "Make", n)
		return len(s), err
	})
	durabox.RegisterActivity("Length", func(_ context.Context, s string) (int, error) { return len(s), nil })
	durabox.RegisterActivity("Make", func(_ context.Context, n int) (string, error) { return strings.Repeat("m", n), nil })
}

func main() {}
