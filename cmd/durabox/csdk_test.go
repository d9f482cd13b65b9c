package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/cguest"
)

// cVersions is the C twin of the versions guest (versionsPkg), built with
// -DVERSION=N.
const cVersions = "host/testdata/guests/cversions/versions.c"

// TestCModulesThroughTheCLI runs modules written with the C SDK
// (guest-sdk/c) through the real command line and a real durabox serve,
// on each runtime: checked, deployed, started, an approval killed (-9)
// and restarted while it waits, then raised and finished; every history
// replays identically, on the host and from a repro bundle with no host
// (which shows a line the orchestration logged once, though it ran four
// times);
// and an upgrade's dry run across versions of a C module finds the
// instances that diverge, and none once the change is behind a patch.
func TestCModulesThroughTheCLI(t *testing.T) {
	t.Parallel()
	modules := map[string]string{}
	for _, e := range []string{"hello", "approval", "fanout"} {
		modules[e] = cguest.Build(t, "examples/c/"+e+"/"+e+".c")
	}
	v1, v2, v3 := cguest.Build(t, cVersions), cguest.Build(t, cVersions, "-DVERSION=2"), cguest.Build(t, cVersions, "-DVERSION=3")
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "durabox.db")
			s := startServerAt(t, db, "127.0.0.1:0", "--runtime", rt)
			mustRun := func(want string, args ...string) string {
				t.Helper()
				code, stdout, stderr := durabox(append(args[:1:1], append([]string{"--addr", s.addr}, args[1:]...)...)...)
				if code != 0 || !strings.Contains(stdout, want) {
					t.Fatalf("durabox %s: exit code %d, stdout:\n%s\nstderr:\n%s\nwant stdout to hold %q", strings.Join(args, " "), code, stdout, stderr, want)
				}
				return stdout
			}
			for _, e := range []string{"hello", "approval", "fanout"} {
				if code, stdout, stderr := durabox("check", modules[e]); code != 0 || strings.Count(stdout, " ok\n") != 2 {
					t.Fatalf("durabox check %s: exit code %d\n%s%s", e, code, stdout, stderr)
				}
				mustRun("deployed ", "deploy", modules[e])
			}
			mustRun("hello\nCompleted\n\"Hello, world!\"\n", "start", "Greeting", "--id", "hello", "--input", `"world"`, "--wait")
			mustRun("fanout\nCompleted\n6\n", "start", "WordCount", "--id", "fanout", "--input", `["a b c", "d e", "f"]`, "--wait")

			mustRun("req\n", "start", "Approval", "--id", "req", "--input", `{"item": "laptop", "timeout": "1h"}`)
			waitingForApproval(t, s.client(), "req")
			mustRun("custom status  waiting for a decision on laptop\n", "status", "req")
			mustRun("null\n", "query", "req", "Decision")
			s.kill(t)
			s = startServerAt(t, db, "127.0.0.1:0", "--runtime", rt)
			mustRun("raised event Approval for req\n", "raise", "req", "Approval", "--data", `{"approved": true, "by": "ada"}`)
			inst, err := s.client().Wait(context.Background(), "req")
			if err != nil {
				t.Fatal(err)
			}
			if inst.Status != engine.StatusCompleted || string(inst.Result) != `"laptop approved by ada"` {
				t.Fatalf("after the kill: status %s, result %s", inst.Status, inst.Result)
			}
			mustRun("\"approved\": true", "query", "req", "Decision")
			events, err := s.client().History(context.Background(), "req")
			if err != nil {
				t.Fatal(err)
			}
			checkHistory(t, events)
			const want = "OrchestrationStarted ActivityScheduled ActivityCompleted CustomStatusSet ExternalSubscribed TimerCreated ExternalEvent TimerCancelled ActivityScheduled ActivityCompleted OrchestrationCompleted"
			if got := kindsOf(events); got != want {
				t.Fatalf("history after the kill:\n got %s\nwant %s", got, want)
			}

			for _, id := range []string{"hello", "fanout", "req"} {
				mustRun("ok: ", "replay", id)
				bundle := filepath.Join(t.TempDir(), id+".dbx")
				mustRun("exported "+id, "export", id, "-o", bundle)
				if code, stdout, stderr := durabox("replay", bundle); code != 0 || !regexp.MustCompile(`(?m)^ok: module [0-9a-f]{12} reproduces the \d+ events of instance `+id+`, execution 1; it is Completed$`).MatchString(stdout) {
					t.Fatalf("durabox replay %s: exit code %d\n%s%s", bundle, code, stdout, stderr)
				}
			}

			// An upgrade's dry run across versions of a C module.
			hashes := map[string]string{"v1": deployFile(t, s, v1)}
			ids := []string{"flow-0", "flow-1", "flow-2"}
			for _, id := range ids {
				mustRun(id, "start", "Flow", "--id", id, "--input", `"x"`)
			}
			untilAll(t, s.client(), ids, "the first wait", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusRunning })
			for _, id := range ids {
				waitFor(t, s.client(), id, "its first wait", func(e []engine.Event) bool { return strings.Contains(kindsOf(e), "ExternalSubscribed") })
			}
			goOn(t, s.client(), ids[:1])
			untilAll(t, s.client(), ids[:1], "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
			hashes["v2"] = deployFile(t, s, v2)
			hashes["v3"] = deployFile(t, s, v3)
			dryRuns := []struct {
				to, want string
				code     int
			}{
				{"v2", `flow-0    diverges    7       nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")
flow-1    compatible  2
flow-2    compatible  2
3 instances: 2 compatible, 1 diverge. Dry run: nothing moved.
`, 3},
				// v3 asks for the patch: old steps replay as v1's.
				{"v3", `flow-0    compatible  7
flow-1    compatible  2
flow-2    compatible  2
3 instances: 3 compatible. Dry run: nothing moved.
`, 0},
			}
			for _, d := range dryRuns {
				from, to := hashes["v1"][:12], hashes[d.to][:12]
				want := fmt.Sprintf("upgrade %s → %s (Flow), dry run: 3 open instances\nINSTANCE  OUTCOME     EVENTS  DETAILS\n%s", from, to, d.want)
				if code, stdout, stderr := durabox("upgrade", "--addr", s.addr, from, to, "--dry-run"); code != d.code || stdout != want {
					t.Fatalf("upgrade v1 → %s --dry-run: exit code %d, stdout:\n%s\nstderr:\n%s\nwant exit code %d, stdout:\n%s", d.to, code, stdout, stderr, d.code, want)
				}
			}
			goOn(t, s.client(), ids)
			untilAll(t, s.client(), ids[:1], "the end", func(inst api.InstanceSummary) bool { return inst.Status.IsTerminal() })
			if got := results(t, s.client(), ids[:1])["flow-0"]; got != `Completed "step a by v1, finished by v1"` {
				t.Fatalf("flow-0: %s", got)
			}
			// Flow ran four times from its first line; its log line, once.
			bundle := filepath.Join(t.TempDir(), "flow-0.dbx")
			mustRun("exported flow-0", "export", "flow-0", "-o", bundle)
			if code, stdout, stderr := durabox("replay", bundle); code != 0 || strings.Count(stdout, "the first go came (v1)") != 1 {
				t.Fatalf("durabox replay %s: exit code %d, want the log line once:\n%s%s", bundle, code, stdout, stderr)
			}
		})
	}
}

// deployFile deploys the module file through the command line and returns
// its hash.
func deployFile(t *testing.T, s *serveProcess, file string) string {
	t.Helper()
	code, stdout, stderr := durabox("deploy", "--addr", s.addr, file, "--json")
	var m api.Module
	if code != 0 || json.Unmarshal([]byte(stdout), &m) != nil || m.Hash == "" {
		t.Fatalf("durabox deploy %s: exit code %d\n%s%s", file, code, stdout, stderr)
	}
	return m.Hash
}
