package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// TestCheck checks a good module, then one a host refuses, through the
// CLI: the good one is ok on each runtime (exit 0), the bad one refused on
// each, with why, and exit 1; --json says the same for scripts.
func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hello, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	good, bad := filepath.Join(dir, "hello.wasm"), filepath.Join(dir, "notes.wasm")
	if err := os.WriteFile(good, hello, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := durabox("check", good)
	want := regexp.MustCompile(`^module [0-9a-f]{12}  orchestrations: Greeting  activities: SayHello\n  wazero    ok\n  wasmtime  ok\n$`)
	if code != 0 || stderr != "" || !want.MatchString(stdout) {
		t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	const why = "host: module refused: the file is not a WebAssembly module (it does not start with \\0asm); build one with durabox build, or GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared"
	code, stdout, stderr = durabox("check", bad)
	want = regexp.MustCompile(`^module [0-9a-f]{12}  orchestrations: none  activities: none\n  wazero    refused: ` + regexp.QuoteMeta(why) + `\n  wasmtime  refused: ` + regexp.QuoteMeta(why) + `\n$`)
	if code != 1 || !want.MatchString(stdout) || stderr != "durabox check: a host would refuse "+bad+": "+why+"\n" {
		t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	code, stdout, _ = durabox("check", "--json", bad)
	var c checked
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	wantRuntimes := []runtimeCheck{{Runtime: "wazero", Error: why}, {Runtime: "wasmtime", Error: why}}
	if code != 1 || c.File != bad || c.Bytes != 5 || len(c.Hash) != 64 || !reflect.DeepEqual(c.Runtimes, wantRuntimes) {
		t.Fatalf("--json: exit code %d, %+v", code, c)
	}
}
