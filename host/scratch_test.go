package host_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// scratchReport is the guest's Report (testdata/guests/scratch).
type scratchReport struct {
	Before, After []string
	Read          string
	Escapes       []string
}

// scratchLeft fails the test if the host left anything in dir, where it
// makes the attempts' scratch directories.
func scratchLeft(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the attempts left %d directories in %s, such as %s; each should be removed when its attempt ends", len(left), dir, left[0].Name())
	}
}

// TestAnActivityHasAScratchDirectoryOfItsOwn runs, on each runtime, two
// attempts of an activity that writes, reads back, lists, renames and
// removes files in its scratch directory and tries to reach outside it:
// each finds the directory empty, sees what it wrote, is refused every
// escape, and leaves nothing on the host once it ends. An orchestration
// that opens a file is refused, as it always was.
func TestAnActivityHasAScratchDirectoryOfItsOwn(t *testing.T) {
	t.Parallel()
	for _, rt := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			h := startHost(t, host.Options{Runtime: rt, ScratchDir: dir})
			h.deploy(t, "host/testdata/guests/scratch")
			inst := h.run(t, "Twice", `{}`)
			if inst.Status != engine.StatusCompleted {
				t.Fatalf("status %s, failure %+v", inst.Status, inst.Failure)
			}
			var reports []scratchReport
			if err := json.Unmarshal(inst.Result, &reports); err != nil {
				t.Fatal(err)
			}
			want := scratchReport{
				After: []string{"a.txt", "sub", "sub/part.csv"},
				Read:  "hello, scratch",
				Escapes: []string{
					"Capabilities insufficient", "Capabilities insufficient", "Capabilities insufficient",
					"open /etc/hostname: Bad file number",
				},
			}
			for i, r := range reports {
				if !slices.Equal(r.Before, want.Before) || !slices.Equal(r.After, want.After) || r.Read != want.Read || !slices.Equal(r.Escapes, want.Escapes) {
					t.Errorf("attempt %d saw\n%+v\nwant\n%+v", i+1, r, want)
				}
			}
			if len(reports) != 2 {
				t.Errorf("%d reports, want 2", len(reports))
			}
			scratchLeft(t, dir)
			peek := h.run(t, "Peek", `{}`)
			if want := `"open /scratch/a.txt: Capabilities insufficient; stat /scratch: Capabilities insufficient"`; string(peek.Result) != want {
				t.Errorf("the orchestration that opens a file got %s; want %s", peek.Result, want)
			}
		})
	}
}

// TestAWritePastTheScratchLimitFailsTheAttempt runs, on each runtime, an
// activity that writes 1 MiB at a time until a write fails, on a host
// whose scratch limit is 4 MiB: the fifth write fails with "No space left
// on device", and the attempt's failure names the limit.
func TestAWritePastTheScratchLimitFailsTheAttempt(t *testing.T) {
	t.Parallel()
	for _, rt := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			h := startHost(t, host.Options{Runtime: rt, ScratchDir: dir, ScratchLimit: 4 << 20})
			h.deploy(t, "host/testdata/guests/scratch")
			inst := h.run(t, "Fill", `{}`)
			want := `activity "Fill" failed: after 4 MiB: write /scratch/big: No space left on device (its scratch directory, /scratch, reached the host's limit of 4 MiB: durabox serve --scratch-mib)`
			if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != want {
				t.Fatalf("status %s, failure %+v; want it failed with %q", inst.Status, inst.Failure, want)
			}
			scratchLeft(t, dir)
		})
	}
}

// TestAStoppedAttemptLeavesNoScratch runs, on each runtime, an activity
// that writes a file in its scratch directory and hangs past its
// deadline: the host stops it, and removes the directory.
func TestAStoppedAttemptLeavesNoScratch(t *testing.T) {
	t.Parallel()
	for _, rt := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			h := startHost(t, host.Options{Runtime: rt, ScratchDir: dir})
			h.deploy(t, "host/testdata/guests/scratch")
			inst := h.run(t, "Hang", `{}`)
			if inst.Status != engine.StatusFailed || inst.Failure == nil || !strings.Contains(inst.Failure.Message, "timed out") {
				t.Fatalf("status %s, failure %+v; want it timed out", inst.Status, inst.Failure)
			}
			scratchLeft(t, dir)
		})
	}
}

// TestAHostWithoutScratchSpaceSaysSo runs an activity that asks for its
// scratch directory on a host that gives none.
func TestAHostWithoutScratchSpaceSaysSo(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{NoScratch: true})
	h.deploy(t, "host/testdata/guests/scratch")
	inst := h.run(t, "Where", `{}`)
	if want := `"durabox: ScratchDir: the host gives this activity no scratch directory (durabox serve --scratch-mib 0, or a host older than scratch space)"`; string(inst.Result) != want {
		t.Errorf("result %s, failure %+v; want %s", inst.Result, inst.Failure, want)
	}
}
