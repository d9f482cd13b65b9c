package layout

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

const module = "github.com/durabox/durabox"

// TestImportsFlowOneWay checks every package's dependencies (transitively,
// tests excluded) against what DESIGN.md allows it.
func TestImportsFlowOneWay(t *testing.T) {
	t.Parallel()
	type rule struct {
		pkg string
		// allowed lists the project packages (by prefix) and third-party
		// modules the package may depend on; the standard library is always
		// allowed.
		allowed []string
		goos    string
	}
	tests := []rule{
		{pkg: "abi"},
		{pkg: "engine", allowed: []string{"abi"}},
		// The test kit is the one package of the SDK that may use the
		// engine: it drives orchestrations natively in go test, and never
		// goes into a module.
		{pkg: "guest-sdk/durabox/durtest", allowed: []string{"guest-sdk/", "engine", "abi"}},
		{pkg: "store", allowed: []string{"store/query", "engine", "abi"}},
		// The logic the SQL stores share; they differ in SQL and drivers.
		{pkg: "store/internal/sqlstore", allowed: []string{"store", "store/query", "engine", "abi"}},
		{pkg: "store/sqlite", allowed: []string{"store", "store/query", "store/internal/sqlstore", "engine", "abi", "github.com/mattn/go-sqlite3"}},
		{pkg: "store/postgres", allowed: []string{"store", "store/query", "store/internal/sqlstore", "engine", "abi", "github.com/jackc/pgx/v5", "github.com/jackc/pgpassfile", "github.com/jackc/pgservicefile", "github.com/jackc/puddle/v2", "golang.org/x/sync", "golang.org/x/sys", "golang.org/x/text"}},
		{pkg: "host/api", allowed: []string{"engine", "abi"}},
		{pkg: "host/client", allowed: []string{"host/api", "engine", "abi"}},
		// The host runs guests on wazero or wasmtime-go, and serves its
		// metrics with Prometheus's client, which
		// brings the modules after it; the store reports its commits
		// through a hook and knows nothing of them. automemlimit (with
		// pbnjay/memory) reads the memory the live cache's default bound
		// is a quarter of. x/time/rate rate-limits a guest's log.
		// go-json-experiment's jsontext checks that JSON entering the
		// host is I-JSON (RFC 7493). robfig/cron reads schedules' cron
		// expressions. OpenTelemetry's API and SDK (with what its SDK
		// brings: logr, auto/sdk, uuid) make and batch the spans; the
		// exporter is serve's, not the host's.
		{pkg: "host", allowed: []string{"host/", "engine", "abi", "store", "store/query", "github.com/tetratelabs/wazero", "github.com/bytecodealliance/wasmtime-go/v39", "golang.org/x/sys",
			"github.com/prometheus", "github.com/beorn7/perks", "github.com/cespare/xxhash/v2", "github.com/munnerz/goautoneg", "go.yaml.in/yaml/v2", "google.golang.org/protobuf",
			"github.com/KimMachineGun/automemlimit", "github.com/pbnjay/memory", "golang.org/x/time", "github.com/go-json-experiment/json",
			"github.com/robfig/cron/v3", "go.opentelemetry.io/otel", "go.opentelemetry.io/auto/sdk", "github.com/go-logr/logr", "github.com/go-logr/stdr", "github.com/google/uuid"}},
		// The HTTP server serves any API (a Host, or the fake): it links no
		// wasm runtime; Prometheus's client serves the metrics, and
		// jsontext checks request bodies.
		{pkg: "host/server", allowed: []string{"host/api", "host/metrics", "host/internal/guard", "host/internal/identity", "host/internal/ijson", "host/internal/size", "host/internal/option",
			"host/bundle", "store", "store/query", "engine", "abi", "github.com/prometheus", "github.com/beorn7/perks", "github.com/cespare/xxhash/v2", "github.com/munnerz/goautoneg",
			"go.yaml.in/yaml/v2", "google.golang.org/protobuf", "golang.org/x/sys", "github.com/go-json-experiment/json"}},
		// The operations reach the runtime only through ops.Runtime.
		{pkg: "host/internal/ops", allowed: []string{"host/api", "host/bundle", "host/internal/guard", "host/internal/identity", "host/internal/seed", "store", "store/query", "engine", "abi"}},
		{pkg: "host/metrics", allowed: []string{"store", "store/query", "engine", "abi", "github.com/prometheus", "github.com/beorn7/perks", "github.com/cespare/xxhash/v2",
			"github.com/munnerz/goautoneg", "go.yaml.in/yaml/v2", "google.golang.org/protobuf", "golang.org/x/sys"}},
		// A repro bundle is data: events and bytes.
		{pkg: "host/bundle", allowed: []string{"engine", "abi"}},
	}
	// Every other package of the SDK goes into modules: it may use its own
	// kind and the ABI, nothing else.
	for _, pkg := range list(t, module+"/guest-sdk/...") {
		if pkg != "guest-sdk/durabox/durtest" {
			tests = append(tests, rule{pkg: pkg, allowed: []string{"abi", "guest-sdk/"}, goos: "wasip1"})
		}
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			t.Parallel()
			self := module + "/" + tt.pkg
			for _, dep := range goList(t, tt.goos, "-deps", self) {
				if dep == self || allowed(dep, tt.allowed) && dep != module+"/guest-sdk/durabox/durtest" {
					continue
				}
				t.Errorf("%s depends on %s, which DESIGN.md does not allow", tt.pkg, dep)
			}
		})
	}
}

// list returns the project packages pattern matches, relative to the
// repository's root.
func list(t *testing.T, pattern string) []string {
	var out []string
	for _, p := range goList(t, "", pattern) {
		out = append(out, strings.TrimPrefix(p, module+"/"))
	}
	return out
}

// goList runs go list with args in the root module, for goos (and wasm)
// unless it is empty, and returns the import paths of the packages it
// lists that are not in the standard library. The root module requires
// the nested ones, so it lists their packages too, by import path.
func goList(t *testing.T, goos string, args ...string) []string {
	t.Helper()
	var env []string
	if goos != "" {
		env = []string{"GOOS=" + goos, "GOARCH=wasm"}
	}
	return strings.Fields(goIn(t, ".", env, append([]string{"list", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, args...)...))
}

// goIn runs the go command with args in dir (relative to the repository's
// root), with env added to the environment, and returns its output, or
// fails t.
func goIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(guestbuild.Root(), dir)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
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
