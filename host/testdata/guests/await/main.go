// Command await runs the guest SDK's waits on state, SelectKeep and
// cancellation scopes on a real host (host: TestAwait*, TestSelectKeep*,
// TestCancellationScope*). The activity that must lose a race fetches a
// URL the test answers only when it chooses, so that events, not timing,
// decide every outcome.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durahttp"
)

// order is the order in which Ordered awaits its events: a build with
// -X main.order=BA is the same orchestration changed.
var order = "AB"

func init() {
	durabox.RegisterActivity("Fetch", func(_ context.Context, url string) (string, error) {
		resp, err := durahttp.Client().Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	})
	// AwaitGo waits up to timeout for a branch to see the event "Go".
	durabox.RegisterOrchestration("AwaitGo", func(ctx *durabox.Context, timeout string) (string, error) {
		d, err := time.ParseDuration(timeout)
		if err != nil {
			return "", err
		}
		ready := false
		ctx.Go(func(ctx *durabox.Context) {
			ready = ctx.WaitEvent("Go").Get(nil) == nil
		})
		ok, err := ctx.AwaitWithTimeout(d, func() bool { return ready })
		switch {
		case err != nil:
			return "", err
		case ok:
			return "ready", nil
		}
		return "timed out", nil
	})
	// KeepLoser races fetching url against the event "Go" with SelectKeep,
	// and uses the fetch's result, which comes after the event won.
	durabox.RegisterOrchestration("KeepLoser", func(ctx *durabox.Context, url string) (string, error) {
		fetch, event := ctx.CallActivity("Fetch", url), ctx.WaitEvent("Go")
		if ctx.SelectKeep(fetch, event) != 1 {
			return "", errors.New("the fetch won")
		}
		late, err := durabox.Await[string](fetch)
		if err != nil {
			return "", err
		}
		return "the event won; the fetch then said " + late, nil
	})
	// Scope starts a timer, a fetch of url and a wait in one scope, cancels
	// them together when the event "Cancel" comes, and then starts a timer
	// in the cancelled scope.
	durabox.RegisterOrchestration("Scope", func(ctx *durabox.Context, url string) (string, error) {
		scope, cancel := ctx.WithCancel()
		ops := []*durabox.Future{scope.NewTimer(time.Hour), scope.CallActivity("Fetch", url), scope.WaitEvent("Never")}
		if err := ctx.WaitEvent("Cancel").Get(nil); err != nil {
			return "", err
		}
		cancel()
		var out []string
		for _, f := range append(ops, scope.NewTimer(time.Second)) {
			out = append(out, fmt.Sprint(errors.Is(f.Get(nil), durabox.ErrCanceled)))
		}
		return strings.Join(out, " "), nil
	})
	// Ordered records a timer for each of the events A and B once a branch
	// has seen it, taking them in the order order says.
	durabox.RegisterOrchestration("Ordered", func(ctx *durabox.Context, _ any) (string, error) {
		var seen string
		for _, name := range "AB" {
			ctx.Go(func(ctx *durabox.Context) {
				if ctx.WaitEvent(string(name)).Get(nil) == nil {
					seen += string(name)
				}
			})
		}
		for _, name := range order {
			if err := ctx.Await(func() bool { return strings.ContainsRune(seen, name) }); err != nil {
				return "", err
			}
			if err := ctx.Sleep(time.Millisecond); err != nil {
				return "", err
			}
		}
		return seen, nil
	})
}

func main() {}
