package guestkit_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/guestkit"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestConformanceGoSDK runs the kit on the Go SDK's conformance module, on
// each runtime: every case passes.
func TestConformanceGoSDK(t *testing.T) {
	t.Parallel()
	path, err := guestbuild.Build("examples/conformance/go")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) { guestkit.Run(t, path, rt) })
	}
}

// TestConformanceFailsABrokenModule runs the kit on a module with
// deliberate bugs (testdata/broken): its Sequence numbers every command 1,
// its Race cancels its timer by a seq that names no operation, and its
// Status words a command otherwise when it replays or its heap grew. On
// each runtime the kit fails it, in the raw cases and on the host, and
// says which command is wrong and why; what the module does not get wrong
// passes.
func TestConformanceFailsABrokenModule(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("host/guestkit/testdata/broken")
	if err != nil {
		t.Fatal(err)
	}
	report, err := guestkit.Check(context.Background(), wasm, guestkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status guestkit.Status
		says   []string
	}{
		"manifest":              {guestkit.Pass, nil},
		"unknown-orchestration": {guestkit.Pass, nil},
		"commands": {guestkit.Fail, []string{`Sequence(["a","b"]), activation 2 (ResolveActivity 1 with "a"): command 1, ScheduleActivity(1, Echo, "b") is numbered 1 where 2 was next`,
			`(ABI.md, "Every command takes a seq")`}},
		"all-jobs-then-code": {guestkit.Fail, []string{`Race(null), activation 2 (ResolveActivity 1 with "fast", FireTimer 2): command 1, CancelTimer(3, target 9) names command 9, which is not an open operation it cancels`}},
		"sequence": {guestkit.Fail, []string{`instance sequence of Sequence: expected it Completed with ["a","b","c"]; it is Failed: engine: the guest numbered a command 1 where 2 was next (a guest SDK bug)`,
			`see docs/conformance.md, "Sequence"`}},
		"race":             {guestkit.Fail, []string{`instance race of Race: expected it Completed with "fast"; it is Failed: engine: the guest emitted CancelTimer(command 9), but command 9 is not an open TimerCreated`}},
		"fanout":           {guestkit.Fail, []string{`it is Failed: the broken module does not implement FanOut`}},
		"events":           {guestkit.Fail, []string{"raise second for instance events: host: instance finished", "it is Failed: the broken module does not implement Events"}},
		"status-and-patch": {guestkit.Fail, []string{`durabox replay of instance status fails`, `CustomStatusSet("working"), the orchestration emitted SetCustomStatus("working (replaying)")`}},
		"replay-same-bytes": {guestkit.Fail, []string{`replayed on a fresh instance: Status(null), activation 1 (Start Status): answered other bytes than the same activation did live`,
			"live it commanded\n  SetCustomStatus(1, working)", "this time\n  SetCustomStatus(1, working (replaying))"}},
		"heap-independent": {guestkit.Fail, []string{"on a fresh instance whose heap the kit disturbed first: Status(null), activation 1 (Start Status): command 1 differs",
			"the module answered\n  SetCustomStatus(1, working (the heap grew))"}},
		"live-equals-replayed": {guestkit.Fail, []string{"instance status, execution 1, event 5: a host that replays every turn on a fresh instance recorded another event than one that kept the instance live"}},
		"query":                {guestkit.Skip, []string{"the module does not register the optional orchestration Queryable"}},
	}
	seen := map[string]int{}
	for _, r := range report.Results {
		seen[r.Case]++
		w, ok := want[r.Case]
		if !ok {
			continue
		}
		if r.Status != w.status {
			t.Errorf("%s on %s: %s (%s), want %s", r.Case, r.Runtime, r.Status, r.Message, w.status)
		}
		for _, s := range w.says {
			if !strings.Contains(r.Message, s) {
				t.Errorf("%s on %s says:\n%s\nwant it to say:\n%s", r.Case, r.Runtime, r.Message, s)
			}
		}
	}
	for _, c := range guestkit.Cases() {
		if seen[c] != len(host.Runtimes) {
			t.Errorf("case %s ran %d times, want once on each runtime", c, seen[c])
		}
	}
	if report.SDK != "broken (deliberately)" || len(report.Failed()) == 0 {
		t.Errorf("the report: sdk %q, %d failed", report.SDK, len(report.Failed()))
	}
}

// TestConformanceRefusedModule: a module a host refuses fails the
// manifest case with the host's words, and no other case runs.
func TestConformanceRefusedModule(t *testing.T) {
	t.Parallel()
	report, err := guestkit.Check(context.Background(), []byte("notes"), guestkit.Options{Runtimes: []string{host.RuntimeWazero}})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Results) != 1 || report.Results[0].Case != "manifest" || report.Results[0].Status != guestkit.Fail ||
		!strings.Contains(report.Results[0].Message, "a host refuses the module, so no case can run: host: module refused: the file is not a WebAssembly module") {
		t.Fatalf("%+v", report.Results)
	}
}

// TestConformanceModuleLackingNames runs the kit on a module that is no
// conformance module (the hello example): the manifest case fails, naming
// what it lacks, the cases that need those fail saying why, and a case
// that needs none of them still passes.
func TestConformanceModuleLackingNames(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	report, err := guestkit.Check(context.Background(), wasm, guestkit.Options{Runtimes: []string{host.RuntimeWazero}, Run: regexp.MustCompile(`^(unknown-orchestration|sequence)$`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name   string
		status guestkit.Status
		says   string
	}{
		{"manifest", guestkit.Fail, "the module does not register orchestration Sequence, orchestration FanOut,"},
		{"unknown-orchestration", guestkit.Pass, ""},
		{"sequence", guestkit.Fail, `start Sequence(["a","b","c"]) as instance sequence: host: unknown orchestration "Sequence": no deployed module registers it`},
	}
	if len(report.Results) != len(want) {
		t.Fatalf("%+v", report.Results)
	}
	for i, w := range want {
		if r := report.Results[i]; r.Case != w.name || r.Status != w.status || !strings.Contains(r.Message, w.says) {
			t.Errorf("%s: %s %s, want %s saying %s", r.Case, r.Status, r.Message, w.status, w.says)
		}
	}
}
