package guestkit_test

import (
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/guestkit"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestConformanceRustSDK runs the kit on the Rust SDK's conformance module
// (examples/conformance/rust, built by guest-sdk/rust/build.sh), on each
// runtime: every case passes. Without the Rust toolchain it skips, saying
// so, but under $DURABOX_REQUIRE_RUST=1 (CI) it fails.
func TestConformanceRustSDK(t *testing.T) {
	t.Parallel()
	path := guestbuild.RustModule(t, "examples/conformance/rust/lib.rs")
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) { guestkit.Run(t, path, rt) })
	}
}
