package cguest

import (
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/guestkit"
)

// TestConformanceCSDK runs the guest conformance kit (docs/conformance.md)
// on the C SDK's conformance module, examples/conformance/c, on each
// runtime: every case passes.
func TestConformanceCSDK(t *testing.T) {
	t.Parallel()
	path := Build(t, "examples/conformance/c/conformance.c")
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) { guestkit.Run(t, path, rt) })
	}
}
