package cguest

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/abi"
)

// exampleActivation is the activation of abi/ABI.md's "Example bytes": the
// fuzzer starts from it.
const exampleActivation = "02 80 80 d0 e2 c6 bf ce 97 2f 04 00 07 1e 02 01 07 08 47 72 65 65 74 69 6e 67 09 07 68 65 6c 6c 6f 2d 31 0b 07 22 77 6f 72 6c 64 22"

// The fuzzer starts from these too, after the example, which starts the
// fuzz target's orchestration (libFuzzer runs the smaller seeds first):
// an update its handler takes, then one its validator refuses and one of
// no handler (a refusal ends its activation, so they come last).
var (
	updateActivation = abi.EncodeActivation(&abi.Activation{Time: 2, Jobs: []abi.Job{
		{Kind: abi.JobUpdate, Name: "u", Input: []byte(`1`), UpdateID: "taken-by-its-handler-once-the-instance-runs"},
	}})
	refusalsActivation = abi.EncodeActivation(&abi.Activation{Time: 3, Jobs: []abi.Job{
		{Kind: abi.JobUpdate, Name: "u", Input: []byte(`-1`), UpdateID: "refused-by-its-validator"},
		{Kind: abi.JobUpdate, Name: "v", UpdateID: "refused-for-want-of-a-handler"},
	}})
)

// TestSDKUnderSanitizers runs the C SDK's fuzz target (guest-sdk/c/fuzz):
// its decoders, JSON readers and runtime given inputs libFuzzer makes from
// real activations, natively under AddressSanitizer and
// UndefinedBehaviorSanitizer, which stop at the first read past an
// input's end, or other undefined behaviour, and fail the test with it.
func TestSDKUnderSanitizers(t *testing.T) {
	t.Parallel()
	Require(t)
	readSources(t, "guest-sdk/c/fuzz/fuzz.c")
	dir := t.TempDir()
	bin := filepath.Join(dir, "fuzz")
	if msg, err := makeMk("durabox-fuzz", "OUT="+bin); err != nil {
		t.Fatalf("build the fuzz target: %v\n%s", err, msg)
	}
	seed, err := hex.DecodeString(strings.ReplaceAll(exampleActivation, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(dir, "corpus")
	if err := os.Mkdir(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"activation": seed, "update": updateActivation, "refusals": refusalsActivation} {
		if err := os.WriteFile(filepath.Join(corpus, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A fixed seed and count: the same inputs every run. Leaks are not
	// looked for: an instance's state lives as long as it does.
	cmd := exec.Command(bin, "-seed=1", "-runs=100000", "-detect_leaks=0", "-artifact_prefix="+dir+"/", corpus)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the fuzz target failed: %v\n%s", err, out)
	}
}
