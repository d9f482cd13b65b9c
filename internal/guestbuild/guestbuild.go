// Package guestbuild builds Go packages into Durabox guest modules for tests,
// the way a user does (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared).
// Build builds each package of this repository once per test process;
// Command is the build itself, which host/replaytest runs on an author's
// package.
package guestbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]string{}
)

// Root returns the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds the package at pkg (a path relative to the repository root,
// such as "examples/wasm/hello") and returns the path of its .wasm file.
// Each of vars ("main.version=v2") sets a string variable at link time, so
// one package can make several different modules.
func Build(pkg string, vars ...string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	key := strings.Join(append([]string{pkg}, vars...), " ")
	if out, ok := built[key]; ok {
		return out, nil
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "durabox-guests-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	out := filepath.Join(dir, fmt.Sprintf("%d.wasm", len(built)))
	if msg, err := Command(Root(), "./"+pkg, out, vars...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s to wasm: %v\n%s", pkg, err, msg)
	}
	built[key] = out
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

// Cleanup removes every module built; call it at the end of TestMain.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	dir, built = "", map[string]string{}
}
