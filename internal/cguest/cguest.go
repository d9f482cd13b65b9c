// Package cguest builds the C guest modules of this repository (written
// with guest-sdk/c) for tests, with the rule of guest-sdk/c/durabox.mk
// that make build uses, so that a test runs what a user builds.
//
// It needs make, clang, lld and wasi-libc. Without them Build skips the
// test, saying what is missing, unless $DURABOX_REQUIRE_CLANG is 1 (as
// .ci/run sets it, after installing them): then it fails the test.
package cguest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

var (
	mu sync.Mutex
	// built maps what was built (sources and flags) to the module's file.
	built = map[string]string{}
	dir   string
)

// makeMk runs make on durabox.mk at the repository's root with args.
func makeMk(args ...string) (string, error) {
	cmd := exec.Command("make", append([]string{"-s", "--no-print-directory", "-f", "guest-sdk/c/durabox.mk"}, args...)...)
	cmd.Dir = guestbuild.Root()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Missing says what of the toolchain is missing, or "" when nothing is.
func Missing() string {
	if _, err := exec.LookPath("make"); err != nil {
		return "make"
	}
	out, err := makeMk("durabox-c-missing")
	if err != nil {
		return fmt.Sprintf("make durabox-c-missing failed: %v: %s", err, out)
	}
	return out
}

// Require skips t, or fails it under $DURABOX_REQUIRE_CLANG=1, when the
// toolchain is missing.
func Require(t testing.TB) {
	t.Helper()
	missing := Missing()
	if missing == "" {
		return
	}
	why := "the C guest SDK's toolchain is missing: " + missing + " (apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)"
	if os.Getenv("DURABOX_REQUIRE_CLANG") == "1" {
		t.Fatal(why + "; $DURABOX_REQUIRE_CLANG=1 requires it")
	}
	t.Skip(why)
}

// Build builds the module of the C file src (a path from the repository's
// root, compiled with the SDK) with the compiler flags extra (such as
// -DVERSION=2), and returns its file, which stays until Cleanup: a test
// must not change it. Each module is built once a process.
func Build(t testing.TB, src string, extra ...string) string {
	t.Helper()
	Require(t)
	mu.Lock()
	defer mu.Unlock()
	key := strings.Join(append([]string{src}, extra...), " ")
	readSources(t, src)
	if out, ok := built[key]; ok {
		return out
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "durabox-cguest-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
	}
	out := filepath.Join(dir, fmt.Sprintf("module-%d.wasm", len(built)))
	if msg, err := makeMk("durabox-module", "OUT="+out, "SRC="+src, "EXTRA="+strings.Join(extra, " ")); err != nil {
		t.Fatalf("build %s: %v\n%s", key, err, msg)
	}
	built[key] = out
	return out
}

// readSources reads every file a build of src reads: go test records the
// files a test opens, and runs it again, instead of reporting its cached
// result, once one of them changes (clang's reads, in another process, it
// does not see).
func readSources(t testing.TB, src string) {
	t.Helper()
	sdk, err := filepath.Glob(filepath.Join(guestbuild.Root(), "guest-sdk", "c", "*.[ch]"))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := filepath.Glob(filepath.Join(guestbuild.Root(), "guest-sdk", "c", "src", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(append(sdk, inner...), filepath.Join(guestbuild.Root(), "guest-sdk", "c", "durabox.mk"), filepath.Join(guestbuild.Root(), src)) {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// Wasm builds the module as Build does and returns its bytes.
func Wasm(t testing.TB, src string, extra ...string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(Build(t, src, extra...))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// Cleanup removes what this process built; call it at the end of TestMain.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	built, dir = map[string]string{}, ""
}
