// Package guestbuild builds Go packages into Durabox guest modules for tests,
// the way a user does (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared).
// Each package is built once per test process.
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
	ldflags := ""
	for _, v := range vars {
		ldflags += " -X " + v
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-ldflags="+ldflags, "-o", out, "./"+pkg)
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s to wasm: %v\n%s", pkg, err, msg)
	}
	built[key] = out
	return out, nil
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
