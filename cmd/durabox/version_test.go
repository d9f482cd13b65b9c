package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

// TestVersion: the durabox binary says what it was built from: the
// runtimes' versions are those go.mod requires; and --host prints the
// host's, as GET /v1/version answers it.
func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(binary(t), "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v api.Version
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(guestbuild.Root(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	required := func(path string) string {
		m := regexp.MustCompile(regexp.QuoteMeta(path) + `\S* (v\S+)`).FindSubmatch(mod)
		if m == nil {
			t.Fatalf("go.mod requires no %s", path)
		}
		return string(m[1])
	}
	want := map[string]string{"wazero": required("github.com/tetratelabs/wazero"), "wasmtime": required("github.com/bytecodealliance/wasmtime-go/")}
	if v.Go != runtime.Version() || v.ABI != abi.Version || v.Durabox == "" || len(v.Runtimes) != 2 || v.Runtimes["wazero"] != want["wazero"] || v.Runtimes["wasmtime"] != want["wasmtime"] ||
		v.Schemas["sqlite"] != sqlite.SchemaVersion || v.Schemas["postgres"] != postgres.SchemaVersion {
		t.Fatalf("durabox version --json:\n%s\nwant Go %s, ABI %d, runtimes %v, schemas sqlite %d and postgres %d", out, runtime.Version(), abi.Version, want, sqlite.SchemaVersion, postgres.SchemaVersion)
	}

	hostVersion := api.Version{Durabox: "v1.2.0", Revision: "abc123", Go: "go1.99", ABI: 1, Runtimes: map[string]string{"wazero": "v1.12.0", "wasmtime": "v39.0.1"}, Schemas: map[string]int{"sqlite": 10, "postgres": 4}}
	srv := httptest.NewServer(fakehost.New(nil).Handler(server.Options{Version: hostVersion}))
	defer srv.Close()
	code, stdout, stderr := durabox("version", "--host", "--addr", srv.URL)
	const text = "durabox   v1.2.0 (commit abc123)\ngo        go1.99\nabi       1\nwasmtime  v39.0.1\nwazero    v1.12.0\nschemas   postgres 4, sqlite 10\n"
	if code != 0 || stdout != text || stderr != "" {
		t.Fatalf("exit code %d, stdout:\n%s\nwant\n%s\nstderr:\n%s", code, stdout, text, stderr)
	}
}
