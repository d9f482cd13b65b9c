// Package guestbuild builds Go packages into Durabox guest modules for tests,
// the way a user does (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared).
//
// Build builds each package of this repository once: the modules it
// builds are kept in a directory every test process shares ($DURABOX_GUEST_CACHE,
// else durabox/guests under the user's cache directory), each named by a
// hash of everything its build reads (key.go), so that the test binaries
// of one make test, and the runs after it, build a module only when its
// sources, go.mod or go.sum, toolchain, GOFLAGS or link-time variables
// changed. Command is the build itself, which host/replaytest runs on an
// author's package.
package guestbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Root returns the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds the package at pkg (a path relative to the repository root,
// such as "examples/wasm/hello") and returns the path of its .wasm file,
// which stays in the shared directory: a test must not change it. Each of
// vars ("main.version=v2") sets a string variable at link time, so one
// package can make several different modules.
func Build(pkg string, vars ...string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	memo := strings.Join(append([]string{pkg}, vars...), " ")
	if out, ok := built[memo]; ok {
		return out, nil
	}
	c, err := sharedCache()
	if err != nil {
		return "", err
	}
	out, _, err := c.build(Root(), "./"+pkg, vars)
	if err != nil {
		return "", err
	}
	built[memo] = out
	return out, nil
}

// Command returns the go build that builds the package pkg (such as "."),
// in the directory dir, into the module file out, the way a user does
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared). Each of vars
// ("main.version=v2") sets a string variable at link time.
func Command(dir, pkg, out string, vars ...string) *exec.Cmd {
	ldflags := ""
	for _, v := range vars {
		ldflags += " -X " + v
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-ldflags="+ldflags, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	return cmd
}

// Wasm builds the package at pkg like Build and returns the module's bytes.
func Wasm(pkg string, vars ...string) ([]byte, error) {
	path, err := Build(pkg, vars...)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// Cleanup forgets what this process built and trims the shared directory
// of the modules no build has used for five days; call it at the end of
// TestMain.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	built = map[string]string{}
	if c, err := sharedCache(); err == nil {
		c.trim()
	}
}
