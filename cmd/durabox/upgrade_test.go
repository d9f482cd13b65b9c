package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// The versions guest: Flow waits for "go", calls Step ("a" in v1, "b" in
// v2), waits for "go" again, and reports who ran what.
const versionsPkg = "host/testdata/guests/versions"

// deployVersion deploys a version of the versions guest and returns its
// hash.
func deployVersion(t *testing.T, c *client.Client, vars ...string) string {
	t.Helper()
	wasm, err := guestbuild.Wasm(versionsPkg, vars...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return m.Hash
}

// untilAll polls the instances until ready holds for every one of ids.
func untilAll(t *testing.T, c *client.Client, ids []string, what string, ready func(api.InstanceSummary) bool) map[string]api.InstanceSummary {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := map[string]api.InstanceSummary{}
		var late []string
		req := client.ListRequest{Limit: 1000}
		for {
			page, err := c.List(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, inst := range page.Instances {
				if want[inst.ID] {
					got[inst.ID] = inst
					if !ready(inst) {
						late = append(late, inst.ID)
					}
				}
			}
			if req.Cursor = page.Next; req.Cursor == "" {
				break
			}
		}
		if len(late) == 0 && len(got) == len(ids) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d instances never got to %s: %v", len(late)+len(ids)-len(got), what, late)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// results returns the result of each instance.
func results(t *testing.T, c *client.Client, ids []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		inst, err := c.Instance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = fmt.Sprintf("%s %s", inst.Status, inst.Result)
	}
	return out
}

// goOn raises "go" for each instance.
func goOn(t *testing.T, c *client.Client, ids []string) {
	t.Helper()
	for _, id := range ids {
		if err := c.Raise(context.Background(), id, api.RaiseRequest{Name: "go"}); err != nil {
			t.Fatal(err)
		}
	}
}

const atSecond = "waiting for the second go"

// TestUpgradeEndToEnd: 200 instances of v1 wait at different points, on a
// real durabox serve; v2 changes the code after the first wait. The dry
// run reports exactly the instances past that point as diverging, the rest
// as compatible, and moves nothing; the upgrade moves the compatible ones,
// which finish on v2 with the move in their history, while the others
// finish on v1.
func TestUpgradeEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	c := s.client()
	ctx := context.Background()
	v1 := deployVersion(t, c)
	var all, passed, waiting []string
	for i := range 200 {
		id := fmt.Sprintf("flow-%03d", i)
		if _, err := c.Start(ctx, api.StartRequest{Name: "Flow", Input: json.RawMessage(`"x"`), ID: id}); err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
		if i%3 == 0 {
			passed = append(passed, id)
		} else {
			waiting = append(waiting, id)
		}
	}
	untilAll(t, c, all, "the first wait", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusRunning })
	goOn(t, c, passed)
	untilAll(t, c, passed, "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
	v2 := deployVersion(t, c, "main.version=v2")

	// The dry run, by hashes.
	code, stdout, stderr := durabox("upgrade", "--addr", s.addr, v1[:12], v2[:12], "--dry-run", "--json")
	if code != 3 || stderr != "durabox upgrade: 67 of 200 instances would not move\n" {
		t.Fatalf("upgrade --dry-run: exit code %d, stderr %s; want 3, and that 67 of 200 would not move", code, stderr)
	}
	var report api.UpgradeReport
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string][]string{}
	for _, r := range report.Results {
		outcomes[r.Outcome] = append(outcomes[r.Outcome], r.InstanceID)
		if r.Outcome == api.UpgradeDiverges && (r.Divergence.EventID != 4 || r.Divergence.Code != engine.ChangedCommand) {
			t.Errorf("%s diverges at event %d (%s); want event 4, a changed command", r.InstanceID, r.Divergence.EventID, r.Divergence.Code)
		}
	}
	for outcome, want := range map[string][]string{api.UpgradeCompatible: waiting, api.UpgradeDiverges: passed} {
		got := outcomes[outcome]
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%d instances %s, want %d: got %v", len(got), outcome, len(want), got)
		}
	}
	if report.Summary != (api.UpgradeSummary{Compatible: 133, Diverges: 67}) {
		t.Errorf("summary %+v", report.Summary)
	}
	untilAll(t, c, all, "staying on v1 after the dry run", func(inst api.InstanceSummary) bool { return inst.ModuleHash == v1 })

	// The same dry run by the orchestration's name, for people.
	code, stdout, _ = durabox("upgrade", "--addr", s.addr, "Flow", "--dry-run")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 3 || len(lines) != 203 ||
		lines[0] != fmt.Sprintf("upgrade %s → %s (Flow), dry run: 200 open instances", v1[:12], v2[:12]) ||
		!strings.HasPrefix(lines[1], "INSTANCE  OUTCOME     EVENTS  DETAILS") ||
		lines[2] != `flow-000  diverges    7       nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")` ||
		lines[3] != "flow-001  compatible  2" ||
		lines[202] != "200 instances: 133 compatible, 67 diverge. Dry run: nothing moved." {
		t.Errorf("upgrade Flow --dry-run: exit code %d, output:\n%s", code, strings.Join(lines[:min(len(lines), 5)], "\n")+"\n…\n"+lines[len(lines)-1])
	}

	// The upgrade.
	code, stdout, stderr = durabox("upgrade", "--addr", s.addr, "Flow")
	if want := fmt.Sprintf("200 instances: 133 moved to %s, 67 diverge. 67 instances stay on %s.", v2[:12], v1[:12]); code != 3 || !strings.HasSuffix(stdout, want+"\n") {
		t.Fatalf("upgrade: exit code %d, stderr %s, output ending:\n%s\nwant it to end with %s", code, stderr, stdout[max(0, len(stdout)-300):], want)
	}
	untilAll(t, c, waiting, "v2", func(inst api.InstanceSummary) bool { return inst.ModuleHash == v2 })
	untilAll(t, c, passed, "v1", func(inst api.InstanceSummary) bool { return inst.ModuleHash == v1 })
	for _, id := range waiting {
		events, err := c.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if last := events[len(events)-1]; len(events) != 3 || last.Kind != engine.ModuleChanged || last.FromModule != v1 || last.Module != v2 {
			t.Fatalf("%s's history after the move: %s", id, kindsOf(events))
		}
	}

	goOn(t, c, waiting)
	untilAll(t, c, waiting, "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
	goOn(t, c, all)
	untilAll(t, c, all, "the end", func(inst api.InstanceSummary) bool { return inst.Status.IsTerminal() })
	done := results(t, c, all)
	for _, id := range all {
		want := `Completed "step a by v1, finished by v1"`
		if slices.Contains(waiting, id) {
			want = `Completed "step b by v2, finished by v2"`
		}
		if done[id] != want {
			t.Errorf("%s: %s; want %s", id, done[id], want)
		}
	}
}

// exactRun is a run of the command line whose exit code and whole output
// are known.
type exactRun struct {
	name       string
	args       []string
	wantCode   int
	wantStdout string
	wantStderr string
}

// TestUpgradeByName: upgrade NAME checks the open instances of NAME on
// every older module against the newest, not only those on the module
// before it, and its exit code says whether every instance moved (0) or
// some did not, or with --dry-run would not (3).
func TestUpgradeByName(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	c := s.client()
	ctx := context.Background()
	start := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			if _, err := c.Start(ctx, api.StartRequest{Name: "Flow", Input: json.RawMessage(`"x"`), ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		untilAll(t, c, ids, "the first wait", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusRunning })
	}
	v1 := deployVersion(t, c)
	start("v1-passed", "v1-waiting")
	goOn(t, c, []string{"v1-passed"})
	untilAll(t, c, []string{"v1-passed"}, "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
	v3 := deployVersion(t, c, "main.version=v3")
	start("v3-waiting")
	v2 := deployVersion(t, c, "main.version=v2")
	diverges := `nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`
	for _, tt := range []exactRun{
		{"a dry run", []string{"Flow", "--dry-run"}, 3, fmt.Sprintf(`upgrade %[1]s, %[2]s → %[3]s (Flow), dry run: 3 open instances
INSTANCE    FROM          OUTCOME     EVENTS  DETAILS
v1-passed   %[2]s  diverges    7       %[4]s
v1-waiting  %[2]s  compatible  2
v3-waiting  %[1]s  compatible  2
3 instances: 2 compatible, 1 diverge. Dry run: nothing moved.
`, v3[:12], v1[:12], v2[:12], diverges), "durabox upgrade: 1 of 3 instances would not move\n"},
		{"the upgrade", []string{"Flow"}, 3, fmt.Sprintf(`upgrade %[1]s, %[2]s → %[3]s (Flow): 3 open instances
INSTANCE    FROM          OUTCOME   EVENTS  DETAILS
v1-passed   %[2]s  diverges  7       %[4]s
v1-waiting  %[2]s  moved     2
v3-waiting  %[1]s  moved     2
3 instances: 2 moved to %[3]s, 1 diverge. 1 instance stays on %[2]s.
`, v3[:12], v1[:12], v2[:12], diverges), "durabox upgrade: 1 of 3 instances did not move\n"},
		{"every instance would move", []string{v1[:12], v3[:12], "--dry-run"}, 0, fmt.Sprintf(`upgrade %s → %s (Flow), dry run: 1 open instance
INSTANCE   OUTCOME     EVENTS  DETAILS
v1-passed  compatible  7
1 instance: 1 compatible. Dry run: nothing moved.
`, v1[:12], v3[:12]), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := durabox(append([]string{"upgrade", "--addr", s.addr}, tt.args...)...)
			if code != tt.wantCode || stdout != tt.wantStdout || stderr != tt.wantStderr {
				t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
	for id, want := range map[string]string{"v1-passed": v1, "v1-waiting": v2, "v3-waiting": v2} {
		if inst, err := c.Instance(ctx, id); err != nil || inst.ModuleHash != want {
			t.Errorf("%s runs on %.12s (%v); want %.12s", id, inst.ModuleHash, err, want)
		}
	}
}

// TestUpgradeRefusals: bad requests are refused, naming the problem, and
// change nothing.
func TestUpgradeRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	c := s.client()
	v1 := deployVersion(t, c)
	if _, err := c.Start(context.Background(), api.StartRequest{Name: "Flow", Input: json.RawMessage(`"x"`), ID: "f"}); err != nil {
		t.Fatal(err)
	}
	other := deployVersion(t, c, "main.other=yes")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an unknown hash", []string{v1, "ffff0000"}, 1, `durabox: upgrade: module not found: no deployed module's hash is or starts with "ffff0000" (durabox deploy prints a module's hash)`},
		{"another orchestration set", []string{v1, other}, 1, fmt.Sprintf(`durabox: upgrade: bad input: module %s registers "Other", not "Flow", which 1 open instance of module %s run; an upgrade moves instances to a new version of their own orchestrations`, other[:12], v1[:12])},
		{"a name with one module", []string{"Flow"}, 1, `durabox: upgrade: bad input: 1 deployed module registers an orchestration called "Flow"; give FROM and TO as module hashes, or the name of an orchestration with two modules deployed`},
		{"a bad --parallel", []string{"Flow", "--parallel", "-1"}, 2, `durabox upgrade: invalid value "-1" for flag --parallel: it must be a whole number, 0 or more (0, the default, is one per CPU of the host)`},
		{"three modules", []string{"a", "b", "c"}, 2, `durabox upgrade: unexpected argument "c"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := durabox(append([]string{"upgrade", "--addr", s.addr}, tt.args...)...)
			if first, _, _ := strings.Cut(stderr, "\n"); code != tt.code || stdout != "" || first != tt.want {
				t.Fatalf("exit code %d, stdout %q, stderr:\n%s\nwant exit code %d and %s", code, stdout, stderr, tt.code, tt.want)
			}
		})
	}
	if inst, err := c.Instance(context.Background(), "f"); err != nil || inst.ModuleHash != v1 {
		t.Fatalf("after the refusals: %+v, %v", inst, err)
	}
}

// TestBundleReplaysWithNoHostAndNoDatabase: a bundle exported from a host
// replays in another directory with the host gone and its database
// deleted, as a separate durabox process: it shows the guest's log and ok,
// and where new code diverges; a corrupted bundle is refused.
func TestBundleReplaysWithNoHostAndNoDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "durabox.db")
	s := startServer(t, db)
	c := s.client()
	deployVersion(t, c)
	if _, err := c.Start(context.Background(), api.StartRequest{Name: "Flow", Input: json.RawMessage(`"x"`), ID: "case"}); err != nil {
		t.Fatal(err)
	}
	untilAll(t, c, []string{"case"}, "the first wait", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusRunning })
	goOn(t, c, []string{"case"})
	untilAll(t, c, []string{"case"}, "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
	bundleFile := filepath.Join(dir, "case.dbx")
	code, stdout, stderr := durabox("export", "--addr", s.addr, "case", "-o", bundleFile)
	if code != 0 || !strings.HasPrefix(stdout, "exported case (Flow, Running): 1 execution, 7 events, module ") {
		t.Fatalf("export: exit code %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	s.kill(t)
	removeAll(t, db)

	elsewhere := t.TempDir()
	copyFile(t, bundleFile, filepath.Join(elsewhere, "case.dbx"))
	v2, err := guestbuild.Build(versionsPkg, "main.version=v2")
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(binary(t), args...)
		cmd.Dir = elsewhere
		cmd.Env = append(os.Environ(), "DURABOX_ADDR=127.0.0.1:1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run("replay", "case.dbx")
	if code != 0 || !regexp.MustCompile(`^replay of case.dbx: instance case \(Flow\), execution 1, on module [0-9a-f]{12} \(the bundle's\)
the guest's log:
  <6>the first go came version=v1
ok: module [0-9a-f]{12} reproduces the 7 events of instance case, execution 1; it is Running
$`).MatchString(out) {
		t.Errorf("replay case.dbx: exit code %d, output:\n%s", code, out)
	}
	code, out = run("replay", "case.dbx", "--module", v2)
	if code != 1 || !strings.Contains(out, "\ndiverges: nondeterminism at event 4: history has ActivityScheduled(\"Step\", \"a\"), the orchestration emitted ScheduleActivity(\"Step\", \"b\")\n") ||
		!strings.HasSuffix(out, "durabox replay: the code does not reproduce the history\n") {
		t.Errorf("replay case.dbx --module v2: exit code %d, output:\n%s", code, out)
	}
	raw, err := os.ReadFile(bundleFile)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(filepath.Join(elsewhere, "bad.dbx"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = run("replay", "bad.dbx")
	if code != 1 || !strings.HasPrefix(out, "durabox replay: bad.dbx: bundle: corrupted: ") {
		t.Errorf("replay of a corrupted bundle: exit code %d, output:\n%s", code, out)
	}
}

// TestExportIsOwnerOnly: a repro bundle holds what the database holds
// (inputs, results, every event), so durabox export writes it readable by
// its owner only whatever the umask, also over a file that was readable by
// all, and leaves no temporary file behind.
func TestExportIsOwnerOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, filepath.Join(dir, "durabox.db"))
	c := s.client()
	deployVersion(t, c)
	if _, err := c.Start(context.Background(), api.StartRequest{Name: "Flow", Input: json.RawMessage(`"secret input"`), ID: "case"}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	existing := filepath.Join(out, "existing.dbx")
	if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer syscall.Umask(syscall.Umask(0o022))
	for _, file := range []string{filepath.Join(out, "new.dbx"), existing} {
		if code, stdout, stderr := durabox("export", "--addr", s.addr, "case", "-o", file); code != 0 {
			t.Fatalf("export -o %s: exit code %d, stdout %s, stderr %s", file, code, stdout, stderr)
		}
		if fi, err := os.Stat(file); err != nil || fi.Mode() != 0o600 {
			t.Errorf("%s: mode %v, %v; want -rw------- (0600), as the database", filepath.Base(file), fi.Mode(), err)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 2 {
		t.Errorf("export left %d files behind, want the 2 bundles: %v", len(entries), entries)
	}
}

func removeAll(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".wasmcache"} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplayAndReset: durabox replay of an instance on its module and on
// another; durabox reset prints its plan, refuses what it cannot do, and
// resets onto the new code.
func TestReplayAndReset(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	c := s.client()
	v1 := deployVersion(t, c)
	if _, err := c.Start(context.Background(), api.StartRequest{Name: "Flow", Input: json.RawMessage(`"x"`), ID: "case"}); err != nil {
		t.Fatal(err)
	}
	untilAll(t, c, []string{"case"}, "the first wait", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusRunning })
	goOn(t, c, []string{"case"})
	untilAll(t, c, []string{"case"}, "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
	v2 := deployVersion(t, c, "main.version=v2")
	cli := func(args ...string) (int, string, string) {
		return durabox(append([]string{args[0], "--addr", s.addr}, args[1:]...)...)
	}
	diverges := `nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`
	plan := fmt.Sprintf(`reset case, execution 1 (7 events), to event 3, on module %s, moving from %s
keep: events 1 to 3
discard: events 4 to 7
  4  ActivityScheduled("Step", "a")
  5  ActivityCompleted(event 4, "step a by v1")
  6  CustomStatusSet("waiting for the second go")
  7  ExternalSubscribed("go")
warning: 1 activity finished after event 3 and will run again:
  Step("a"), scheduled at event 4, completed at event 5 (if the code calls it again)
the new execution goes on with:
  4  ExecutionReset("reset from execution 1, which had 7 events, to its event 3")
  5  ActivityScheduled("Step", "b")
`, v2[:12], v1[:12])
	for _, tt := range []exactRun{
		{"replay on its module", []string{"replay", "case"}, 0,
			fmt.Sprintf("ok: module %s reproduces the 7 events of instance case, execution 1; it is Running\n", v1[:12]), ""},
		{"replay on the new module", []string{"replay", "case", "--module", v2[:10]}, 1,
			"diverges: " + diverges + "\n", "durabox replay: the code does not reproduce the history\n"},
		{"replay of an unknown instance", []string{"replay", "nope"}, 1, "", "durabox: replay: instance not found: \"nope\"\n"},
		{"reset without --to-event", []string{"reset", "case"}, 2, "", "durabox reset: --to-event N is required: the last event to keep, from 1\n\n" + usage(t, "reset")},
		{"reset in the middle of a step", []string{"reset", "case", "--to-event", "6"}, 1, "",
			`durabox: reset: bad input: instance "case", execution 1: engine: not a reset point: event 6 (CustomStatusSet) is in the middle of the step that event 5 (ActivityCompleted) began; reset to event 5 to run that step again on the code the instance goes on with, or to event 7, where the step ends` + "\n"},
		{"reset onto code that does not replay the kept events", []string{"reset", "case", "--to-event", "5", "--module", v2}, 1, "",
			fmt.Sprintf("durabox: reset: the module does not replay the history: module %s, on the 5 events the reset keeps of execution 1: %s\n", v2[:12], diverges)},
		{"reset, dry run", []string{"reset", "case", "--to-event", "3", "--module", v2, "--dry-run"}, 0, plan + "dry run: nothing changed.\n", ""},
		{"reset", []string{"reset", "case", "--to-event", "3", "--module", v2}, 0,
			plan + fmt.Sprintf("reset: instance case goes on in execution 2, on module %s.\n", v2[:12]), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(tt.args...)
			if code != tt.wantCode || stdout != tt.wantStdout || stderr != tt.wantStderr {
				t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
	untilAll(t, c, []string{"case"}, "the second wait on v2", func(inst api.InstanceSummary) bool {
		return inst.CustomStatus == atSecond && inst.ExecutionID == 2 && inst.ModuleHash == v2
	})
	goOn(t, c, []string{"case"})
	untilAll(t, c, []string{"case"}, "the end", func(inst api.InstanceSummary) bool { return inst.Status.IsTerminal() })
	if got := results(t, c, []string{"case"})["case"]; got != `Completed "step b by v2, finished by v2"` {
		t.Fatalf("the reset instance ended %s", got)
	}
}

// TestResetPlanNamesOutcomes: the reset plan of an instance whose
// discarded events hold a failed attempt of an activity and a completed
// one says which failed and which completed, and durabox history shows
// a cancelled instance's end as a cancellation.
func TestResetPlanNamesOutcomes(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	c := s.client()
	deployExample(t, c, "retry")
	ctx := context.Background()
	id, err := c.Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"failures": 1, "delay": "1ms"}`), ID: "retried"})
	if err != nil {
		t.Fatal(err)
	}
	if inst, err := c.Wait(ctx, id); err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("Retry: %+v, %v", inst, err)
	}
	code, stdout, stderr := durabox("reset", "--addr", s.addr, id, "--to-event", "1", "--dry-run")
	want := `warning: 2 activities finished after event 1 and will run again:
  FlakyTask({"number":1,"failures":1,"workMillis":0}), scheduled at event 2, failed at event 3 (if the code calls it again)
  FlakyTask({"number":2,"failures":1,"workMillis":0}), scheduled at event 6, completed at event 7 (if the code calls it again)
`
	if code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("reset --dry-run: exit code %d, stderr %s, stdout:\n%s\nwant it to hold:\n%s", code, stderr, stdout, want)
	}

	id, err = c.Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"failures": 5, "delay": "1h"}`), ID: "cancelled"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, id, "the timer", func(e []engine.Event) bool { return strings.Contains(kindsOf(e), "TimerCreated") })
	if err := c.Cancel(ctx, id, "no longer needed"); err != nil {
		t.Fatal(err)
	}
	if inst, err := c.Wait(ctx, id); err != nil || inst.Status != engine.StatusCanceled {
		t.Fatalf("the cancelled Retry: %+v, %v", inst, err)
	}
	code, stdout, _ = durabox("history", "--addr", s.addr, id)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; code != 0 || !regexp.MustCompile(`^\d+ +\S+ +OrchestrationCanceled +failure=.*no longer needed`).MatchString(last) {
		t.Errorf("history of a cancelled instance ends:\n%s\nwant an OrchestrationCanceled with the reason", last)
	}
}

// TestProgress: on a terminal, an upgrade rewrites one line with its
// running count, and erases it at the end.
func TestProgress(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := &progress{w: &out}
	p.update(api.UpgradeLine{Plan: &api.UpgradePlan{Instances: 3}})
	p.update(api.UpgradeLine{Result: &api.UpgradeResult{Outcome: api.UpgradeMoved}})
	p.update(api.UpgradeLine{Result: &api.UpgradeResult{Outcome: api.UpgradeDiverges}})
	p.update(api.UpgradeLine{Summary: &api.UpgradeSummary{}})
	p.clear()
	const want = "\r\033[Kupgrade: 0/3 replayed: 0 fit (0 moved), 0 diverge, 0 fail, 0 skipped" +
		"\r\033[Kupgrade: 1/3 replayed: 1 fit (1 moved), 0 diverge, 0 fail, 0 skipped" +
		"\r\033[Kupgrade: 2/3 replayed: 1 fit (1 moved), 1 diverge, 0 fail, 0 skipped" +
		"\r\033[K"
	if out.String() != want {
		t.Fatalf("progress wrote %q\nwant %q", out.String(), want)
	}
	var none *progress // not a terminal: nothing
	none.update(api.UpgradeLine{Plan: &api.UpgradePlan{Instances: 3}})
	none.clear()
}
