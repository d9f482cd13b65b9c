// Command conformance holds the orchestrations of the conformance tests
// (engine/CONFORMANCE.md): code whose change between two builds a recorded
// history must catch, the deterministic scheduler's rules through ctx.Go,
// what replay-aware calls see, completions in history order, a
// cancellation the orchestration ignores, and a custom status a reset
// discards. version is set at link time ("main.version=v2") to build the
// changed module.
package main

import (
	"context"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

var version = "v1"

// v2 reports whether this is the changed build.
func v2() bool { return version == "v2" }

func init() {
	durabox.RegisterActivity("Echo", func(_ context.Context, s string) (string, error) { return s, nil })
	durabox.RegisterOrchestration("Child", func(ctx *durabox.Context, n int) (int, error) { return n, nil })
}

func main() {}
