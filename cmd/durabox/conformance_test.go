package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// TestConformance runs the kit through the CLI: on the broken module of
// host/guestkit's tests, the cases asked for fail, each with what was
// expected and what came, and the command exits 1 saying how many; on the
// Go SDK's conformance module they pass, and --json says so for scripts; a
// runtime that does not exist is a usage error.
func TestConformance(t *testing.T) {
	t.Parallel()
	broken, err := guestbuild.Build("host/guestkit/testdata/broken")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := durabox("conformance", broken, "--runtime", "wazero", "--run", "^(sequence|race)$")
	want := regexp.MustCompile(`^module [0-9a-f]{12}  sdk: broken \(deliberately\)
  PASS  wazero  manifest
  FAIL  wazero  sequence
                    instance sequence of Sequence: expected it Completed with \["a","b","c"\]; it is Failed: engine: the guest numbered a command 1 where 2 was next \(a guest SDK bug\)
                    its history:
(?:                      .*\n)+                    see docs/conformance.md, "Sequence"
  FAIL  wazero  race
                    instance race of Race: expected it Completed with "fast"; it is Failed: engine: the guest emitted CancelTimer\(command 9\), but command 9 is not an open TimerCreated \(a guest SDK bug\)
(?:                    .*\n)+1 passed, 2 failed, 0 skipped
$`)
	if code != 1 || !want.MatchString(stdout) || stderr != "durabox conformance: "+broken+" fails 2 of 3 cases; docs/conformance.md says what each expects\n" {
		t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	good, err := guestbuild.Build("examples/conformance/go")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = durabox("conformance", good, "--runtime", "wazero", "--run", "^(commands|cancel)$", "--json")
	var c conformed
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var got []string
	for _, r := range c.Results {
		got = append(got, string(r.Status)+" "+r.Runtime+" "+r.Case)
	}
	if code != 0 || stderr != "" || c.File != good || len(c.Hash) != 64 || !strings.HasPrefix(c.SDK, "durabox-go") ||
		strings.Join(got, ", ") != "PASS wazero manifest, PASS wazero commands, PASS wazero cancel" {
		t.Fatalf("exit code %d, stderr %q, %+v", code, stderr, c)
	}
	if code, _, stderr = durabox("conformance", good, "--runtime", "v8"); code != 2 || !strings.Contains(stderr, `--runtime is wazero, wasmtime or both, not "v8"`) {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
}
