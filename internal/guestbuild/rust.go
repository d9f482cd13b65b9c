package guestbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RustEnv names the environment variable that, set to 1 (as CI sets it,
// having installed Debian's rustc and libstd-rust-dev-wasm32), makes a
// test that needs the Rust toolchain fail without it rather than skip.
const RustEnv = "DURABOX_REQUIRE_RUST"

// ErrNoRust is returned by BuildRust when there is no rustc with a
// standard library for WASI preview 1 (guest-sdk/rust/build.sh exits 3).
var ErrNoRust = errors.New("guestbuild: no Rust toolchain for wasm32-wasi")

// BuildRust builds the Rust crate root src (a path relative to the
// repository root, such as "examples/rust/hello/lib.rs") into a module
// with guest-sdk/rust/build.sh, as make build does, and returns the path
// of its .wasm file in the shared directory (which a test must not
// change). A module is built again only when the SDK's files, the
// script, the files beside src or the rustc changed.
func BuildRust(src string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if out, ok := built["rust "+src]; ok {
		return out, nil
	}
	c, err := sharedCache()
	if err != nil {
		return "", err
	}
	root := Root()
	k, err := rustKey(root, src)
	if err != nil {
		return "", err
	}
	out, _, err := c.keyed(k, func(out string) error {
		cmd := exec.Command(filepath.Join(root, "guest-sdk", "rust", "build.sh"), filepath.Join(root, src), out)
		msg, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			return fmt.Errorf("%w: %s", ErrNoRust, strings.TrimSpace(string(msg)))
		}
		if err != nil {
			return fmt.Errorf("build %s to wasm: %v\n%s", src, err, msg)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	built["rust "+src] = out
	return out, nil
}

// rustKey returns the cache key of src's build: a hash of the rustc
// (its version, and the path $DURABOX_RUSTC names, if set), the SDK's
// files, the build script and every file in src's directory.
func rustKey(root, src string) (string, error) {
	h := sha256.New()
	rustc := os.Getenv("DURABOX_RUSTC")
	if rustc == "" {
		rustc = "/usr/bin/rustc"
	}
	version, _ := exec.Command(rustc, "--version").Output() // none: the build says why
	field(h, "rust")
	field(h, rustc)
	field(h, string(version))
	field(h, src)
	sdk := filepath.Join(root, "guest-sdk", "rust")
	files, err := filepath.Glob(filepath.Join(sdk, "src", "*.rs"))
	if err != nil {
		return "", err
	}
	beside, err := filepath.Glob(filepath.Join(root, filepath.Dir(src), "*"))
	if err != nil {
		return "", err
	}
	for _, f := range append(append(files, filepath.Join(sdk, "build.sh")), beside...) {
		if info, err := os.Stat(f); err != nil || info.IsDir() {
			continue
		}
		if err := file(h, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RustModule builds src as BuildRust does and returns the module's path.
// Without the Rust toolchain it skips t, saying what to install, or fails
// it when $DURABOX_REQUIRE_RUST is 1.
func RustModule(t testing.TB, src string) string {
	t.Helper()
	path, err := BuildRust(src)
	if errors.Is(err, ErrNoRust) {
		if os.Getenv(RustEnv) == "1" {
			t.Fatalf("%v; $%s=1 requires it", err, RustEnv)
		}
		t.Skipf("%v (apt-get install rustc libstd-rust-dev-wasm32; CI does, and sets $%s=1)", err, RustEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// RustWasm is RustModule, returning the module's bytes.
func RustWasm(t testing.TB, src string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(RustModule(t, src))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}
