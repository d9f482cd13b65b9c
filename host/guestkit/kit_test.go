package guestkit_test

import (
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/guestkit"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestConformanceGoSDK runs the kit on the Go SDK's conformance module, on
// each runtime: every case passes.
func TestConformanceGoSDK(t *testing.T) {
	path, err := guestbuild.Build("examples/conformance/go")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) { guestkit.Run(t, path, rt) })
	}
}
