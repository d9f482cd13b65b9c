package layout

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

const module = "github.com/durabox/durabox"

// TestImportsFlowOneWay checks every package's dependencies (transitively,
// tests excluded) against what DESIGN.md allows it.
func TestImportsFlowOneWay(t *testing.T) {
	tests := []struct {
		pkg string
		// allowed lists the project packages (by prefix) and third-party
		// modules the package may depend on; the standard library is always
		// allowed.
		allowed []string
		goos    string
	}{
		{pkg: "abi"},
		{pkg: "engine", allowed: []string{"abi"}},
		{pkg: "guest-sdk/durabox", allowed: []string{"abi"}, goos: "wasip1"},
		{pkg: "store", allowed: []string{"engine", "abi"}},
		{pkg: "store/sqlite", allowed: []string{"store", "engine", "abi", "github.com/mattn/go-sqlite3"}},
		{pkg: "host/client", allowed: []string{"engine", "abi"}},
		{pkg: "host", allowed: []string{"host/", "engine", "abi", "store", "github.com/tetratelabs/wazero", "golang.org/x/sys"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+tt.pkg)
			cmd.Dir = guestbuild.Root()
			if tt.goos != "" {
				cmd.Env = append(cmd.Environ(), "GOOS="+tt.goos, "GOARCH=wasm")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			self := module + "/" + tt.pkg
			for _, dep := range strings.Fields(string(out)) {
				if dep == self || allowed(dep, tt.allowed) {
					continue
				}
				t.Errorf("%s depends on %s, which DESIGN.md does not allow", tt.pkg, dep)
			}
		})
	}
}

// allowed reports whether dep is in allow. An entry with a dot is a
// third-party module and allows its packages; any other entry is a project
// package, and allows the packages under it too when it ends with "/".
func allowed(dep string, allow []string) bool {
	for _, a := range allow {
		switch {
		case strings.Contains(a, "."):
			if dep == a || strings.HasPrefix(dep, a+"/") {
				return true
			}
		case strings.HasSuffix(a, "/"):
			if strings.HasPrefix(dep, module+"/"+a) {
				return true
			}
		case dep == module+"/"+a:
			return true
		}
	}
	return false
}
