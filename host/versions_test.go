package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
)

// The versions guest (host/testdata/guests/versions): Flow waits for "go",
// calls Step (with "a" in v1, "b" in v2, "b" if patched in v3), waits for
// "go" again and reports who ran what.
const versionsPkg = "host/testdata/guests/versions"

// start starts Flow as id on the newest module.
func (h *testHost) startFlow(t *testing.T, id, input string) {
	t.Helper()
	if _, err := h.Start(context.Background(), "Flow", json.RawMessage(input), id); err != nil {
		t.Fatal(err)
	}
}

// goOn raises "go" for id.
func (h *testHost) goOn(t *testing.T, id string) {
	t.Helper()
	if err := h.Raise(context.Background(), id, "go", nil, false); err != nil {
		t.Fatal(err)
	}
}

// atFirst and atSecond wait until id waits for its first or second "go".
func (h *testHost) atFirst(t *testing.T, id string) []engine.Event {
	t.Helper()
	return h.until(t, id, "the first wait", has(1, engine.ExternalSubscribed))
}

func (h *testHost) atSecond(t *testing.T, id string) []engine.Event {
	t.Helper()
	return h.until(t, id, "the second wait", has(2, engine.ExternalSubscribed))
}

// passFirst raises the first "go" and waits for the second wait.
func (h *testHost) passFirst(t *testing.T, id string) {
	t.Helper()
	h.atFirst(t, id)
	h.goOn(t, id)
	h.atSecond(t, id)
}

// module returns the instance's module.
func (h *testHost) module(t *testing.T, id string) string {
	t.Helper()
	inst, err := h.Instance(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inst.ModuleHash
}

// TestUpgrade: a dry run reports the instances that passed the changed
// point as diverging (exactly where), the others as compatible, the one
// the new code crashes on as failing, and moves nothing; the upgrade moves
// the compatible ones, which finish on the new code with the move in their
// history, while the others finish on the old.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	var waiting, passed []string
	for i := range 6 {
		id := fmt.Sprintf("flow-%d", i)
		h.startFlow(t, id, `"x"`)
		if i%2 == 0 {
			h.passFirst(t, id)
			passed = append(passed, id)
		} else {
			h.atFirst(t, id)
			waiting = append(waiting, id)
		}
	}
	h.startFlow(t, "crash", `"crash"`)
	h.passFirst(t, "crash")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")
	before := map[string][]engine.Event{}
	for _, id := range append(append([]string{"crash"}, waiting...), passed...) {
		before[id] = h.history(t, id)
	}

	var lines []api.UpgradeLine
	report, err := h.Upgrade(ctx, api.UpgradeRequest{From: v1.Hash[:10], To: v2.Hash, DryRun: true, Parallel: 3}, func(l api.UpgradeLine) { lines = append(lines, l) })
	if err != nil {
		t.Fatal(err)
	}
	wantPlan := api.UpgradePlan{From: []string{v1.Hash}, To: v2.Hash, Orchestrations: []string{"Flow"}, Instances: 7, DryRun: true}
	if !reflect.DeepEqual(report.Plan, wantPlan) || lines[0].Plan == nil || !reflect.DeepEqual(*lines[0].Plan, wantPlan) {
		t.Errorf("plan %+v, first line %+v; want %+v", report.Plan, lines[0], wantPlan)
	}
	if last := lines[len(lines)-1]; len(lines) != 9 || last.Summary == nil || !reflect.DeepEqual(*last.Summary, report.Summary) {
		t.Errorf("%d lines, the last %+v; want 9, the last the summary %+v", len(lines), last, report.Summary)
	}
	if want := (api.UpgradeSummary{Compatible: 3, Diverges: 3, Fails: 1}); report.Summary != want {
		t.Errorf("summary %+v, want %+v", report.Summary, want)
	}
	const divergence = `nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`
	for _, r := range report.Results {
		switch {
		case slices.Contains(waiting, r.InstanceID):
			if r.Outcome != api.UpgradeCompatible || r.Events != 2 {
				t.Errorf("%s, waiting at the first go: %+v; want compatible after 2 events", r.InstanceID, r)
			}
		case slices.Contains(passed, r.InstanceID):
			want := &api.Divergence{Code: engine.ChangedCommand, EventID: 4, History: `ActivityScheduled("Step", "a")`, Emitted: `ScheduleActivity("Step", "b")`, Message: divergence}
			if r.Outcome != api.UpgradeDiverges || !reflect.DeepEqual(r.Divergence, want) {
				t.Errorf("%s, past the first go: %+v, divergence %+v; want it to diverge: %+v", r.InstanceID, r, r.Divergence, want)
			}
		case r.InstanceID == "crash":
			if r.Outcome != api.UpgradeFails || r.Reason != "orchestration crashed applying event 3: it called os.Exit(3)" {
				t.Errorf("crash: %+v; want it to fail with the exit", r)
			}
		default:
			t.Errorf("a result for %s, which is not an instance of the test", r.InstanceID)
		}
	}
	for id, events := range before {
		if got := h.history(t, id); !reflect.DeepEqual(got, events) || h.module(t, id) != v1.Hash {
			t.Errorf("%s: the dry run changed it: history %v, module %s", id, shape(got), h.module(t, id)[:12])
		}
	}

	// The real upgrade, by the orchestration's name: from its older module to its newest.
	report, err = h.Upgrade(ctx, api.UpgradeRequest{From: "Flow"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.UpgradeSummary{Moved: 3, Diverges: 3, Fails: 1}); report.Summary != want {
		t.Fatalf("summary %+v, want %+v", report.Summary, want)
	}
	for _, id := range waiting {
		events := h.history(t, id)
		last := events[len(events)-1]
		if h.module(t, id) != v2.Hash || last.Kind != engine.ModuleChanged || last.FromModule != v1.Hash || last.Module != v2.Hash || last.ID != 3 {
			t.Errorf("%s after the upgrade: module %s, history %v ending %+v", id, h.module(t, id)[:12], shape(events), last)
		}
	}
	for _, id := range append([]string{"crash"}, passed...) {
		if got := h.history(t, id); !reflect.DeepEqual(got, before[id]) || h.module(t, id) != v1.Hash {
			t.Errorf("%s: the upgrade changed it: history %v, module %s", id, shape(got), h.module(t, id)[:12])
		}
	}
	for _, id := range waiting {
		h.passFirst(t, id)
	}
	for _, id := range append(waiting, passed...) {
		h.goOn(t, id)
	}
	for _, id := range waiting {
		h.finish(t, id, `"step b by v2, finished by v2"`)
	}
	for _, id := range passed {
		h.finish(t, id, `"step a by v1, finished by v1"`)
	}
}

// TestUpgradeWithAPatch: code that asks whether it is patched replays the
// histories from before the patch, so every instance moves; those past the
// patched point keep the old path, the others take the new one, and record
// it.
func TestUpgradeWithAPatch(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	h.startFlow(t, "old", `"x"`)
	h.passFirst(t, "old")
	h.startFlow(t, "new", `"x"`)
	h.atFirst(t, "new")
	v3 := h.deploy(t, versionsPkg, "main.version=v3")
	report, err := h.Upgrade(ctx, api.UpgradeRequest{From: v1.Hash, To: v3.Hash}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.UpgradeSummary{Moved: 2}); report.Summary != want {
		t.Fatalf("summary %+v, want %+v: %+v", report.Summary, want, report.Results)
	}
	h.passFirst(t, "new")
	h.goOn(t, "old")
	h.goOn(t, "new")
	h.finish(t, "old", `"step a by v1, finished by v3"`)
	events := h.finish(t, "new", `"step b by v3, finished by v3"`)
	if count(events, engine.PatchRecorded) != 1 || count(h.history(t, "old"), engine.PatchRecorded) != 0 {
		t.Errorf("patch markers: new %v, old %v; want one in the new instance's history only", shape(events), shape(h.history(t, "old")))
	}
	for _, id := range []string{"old", "new"} {
		rep, err := h.Replay(ctx, id, api.ReplayRequest{})
		if err != nil || !rep.OK() || rep.Module != v3.Hash || rep.Status != engine.StatusCompleted {
			t.Errorf("replay of %s: %+v, %v", id, rep, err)
		}
	}
}

// TestUpgradeRefusesBadRequests: each refused, naming the problem, and
// nothing changes.
func TestUpgradeRefusesBadRequests(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	h.startFlow(t, "open", `"x"`)
	h.atFirst(t, "open")
	h.startFlow(t, "done", `"x"`)
	h.passFirst(t, "done")
	h.goOn(t, "done")
	h.wait(t, "done")
	other := h.deploy(t, versionsPkg, "main.other=yes")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")
	tests := []struct {
		name   string
		req    api.UpgradeRequest
		wantIs error
		want   string
	}{
		{"an unknown hash", api.UpgradeRequest{From: v1.Hash, To: "0000ffff"}, api.ErrModuleNotFound,
			`host: module not found: no deployed module's hash is or starts with "0000ffff" (durabox deploy prints a module's hash)`},
		{"the same module", api.UpgradeRequest{From: v1.Hash, To: v1.Hash[:8]}, api.ErrBadInput,
			"host: bad input: FROM and TO are the same module, " + v1.Hash[:12]},
		{"a module of another orchestration set", api.UpgradeRequest{From: v1.Hash, To: other.Hash}, api.ErrBadInput,
			fmt.Sprintf(`host: bad input: module %s registers "Other", not "Flow", which 1 open instance of module %s run; an upgrade moves instances to a new version of their own orchestrations`, other.Hash[:12], v1.Hash[:12])},
		{"an orchestration with one module", api.UpgradeRequest{From: "Other"}, api.ErrBadInput,
			`host: bad input: 1 deployed module registers an orchestration called "Other"; give FROM and TO as module hashes, or the name of an orchestration with two modules deployed`},
		{"an unknown instance", api.UpgradeRequest{From: v1.Hash, To: v2.Hash, Instances: []string{"open", "nope"}}, api.ErrNotFound,
			`host: instance not found: "nope"`},
		{"a finished instance", api.UpgradeRequest{From: v1.Hash, To: v2.Hash, Instances: []string{"done"}}, api.ErrBadInput,
			fmt.Sprintf(`host: bad input: the instances to upgrade must be open on module %s: "done" has finished (Completed)`, v1.Hash[:12])},
		{"a finished instance, by the orchestration's name", api.UpgradeRequest{From: "Flow", Instances: []string{"open", "done"}}, api.ErrBadInput,
			fmt.Sprintf(`host: bad input: the instances to upgrade must be open instances of Flow on a module older than %s, its newest: "done" has finished (Completed)`, v2.Hash[:12])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			_, err := h.Upgrade(ctx, tt.req, func(api.UpgradeLine) { called = true })
			if !errors.Is(err, tt.wantIs) || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
			if called {
				t.Error("a refused upgrade reported progress")
			}
		})
	}
	if h.module(t, "open") != v1.Hash || count(h.history(t, "open"), engine.ModuleChanged) != 0 {
		t.Fatalf("a refused upgrade moved an instance: %v", shape(h.history(t, "open")))
	}
}

// TestReplay replays instances on their own module and on others.
func TestReplay(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	h.startFlow(t, "past", `"x"`)
	h.passFirst(t, "past")
	other := h.deploy(t, versionsPkg, "main.other=yes")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")

	rep, err := h.Replay(ctx, "past", api.ReplayRequest{})
	want := api.ReplayReport{InstanceID: "past", Execution: 1, Module: v1.Hash, Events: 7, Status: engine.StatusRunning}
	if err != nil || !reflect.DeepEqual(rep, want) {
		t.Fatalf("replay on its module: %+v, %v; want %+v", rep, err, want)
	}
	rep, err = h.Replay(ctx, "past", api.ReplayRequest{Module: v2.Hash[:12], Execution: 1})
	if err != nil || rep.OK() || rep.Divergence == nil || rep.Divergence.EventID != 4 || rep.Module != v2.Hash {
		t.Fatalf("replay on v2: %+v, %v; want a divergence at event 4", rep, err)
	}
	wantErr := fmt.Sprintf(`durabox: replay of instance past, execution 1, on module %s: nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`, v2.Hash[:12])
	if err := rep.Err(); err == nil || err.Error() != wantErr {
		t.Errorf("Err() = %v\nwant %s", err, wantErr)
	}
	for _, tt := range []struct {
		name   string
		id     string
		req    api.ReplayRequest
		wantIs error
	}{
		{"an unknown instance", "nope", api.ReplayRequest{}, api.ErrNotFound},
		{"an unknown module", "past", api.ReplayRequest{Module: "ffff0000"}, api.ErrModuleNotFound},
		{"a module of another orchestration set", "past", api.ReplayRequest{Module: other.Hash}, api.ErrBadInput},
		{"an execution it does not have", "past", api.ReplayRequest{Execution: 2}, api.ErrBadInput},
	} {
		if _, err := h.Replay(ctx, tt.id, tt.req); !errors.Is(err, tt.wantIs) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantIs)
		}
	}
}

// TestExportReplaysWithoutAHost: a bundle written from a host replays with
// the sandbox alone, showing the guest's log, and shows where another
// module diverges.
func TestExportReplaysWithoutAHost(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	h.startFlow(t, "past", `"x"`)
	h.passFirst(t, "past")
	b, err := h.Export(ctx, "past")
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := bundle.Write(&file, b); err != nil {
		t.Fatal(err)
	}
	b, err = bundle.Read(bytes.NewReader(file.Bytes()), int64(file.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if b.ModuleHash != v1.Hash || len(b.Executions) != 1 || len(b.Executions[0].History) != 7 || b.Status != engine.StatusRunning {
		t.Fatalf("bundle: module %s, %d executions, status %s", b.ModuleHash, len(b.Executions), b.Status)
	}
	r, err := host.NewReplayer(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x := b.Executions[0]
	rec := host.Recording{InstanceID: b.InstanceID, Execution: x.Number, Seed: x.Seed, History: x.History}
	var log bytes.Buffer
	rep, err := r.Replay(ctx, b.Module, rec, &log)
	if err != nil || !rep.OK() || rep.Status != engine.StatusRunning {
		t.Fatalf("offline replay: %+v, %v", rep, err)
	}
	if !strings.Contains(log.String(), "<6>the first go came version=v1\n") {
		t.Errorf("the guest's log, replayed:\n%s\nwant the line of the first go", log.String())
	}
	v2, err := guestbuild.Wasm(versionsPkg, "main.version=v2")
	if err != nil {
		t.Fatal(err)
	}
	rep, err = r.Replay(ctx, v2, rec, nil)
	if err != nil || rep.Divergence == nil || rep.Divergence.EventID != 4 {
		t.Fatalf("offline replay on v2: %+v, %v; want a divergence at event 4", rep, err)
	}
	other, err := guestbuild.Wasm(versionsPkg, "main.other=yes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Replay(ctx, other, rec, nil); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("offline replay on a module of other orchestrations: %v; want ErrBadInput", err)
	}
	if _, err := r.Replay(ctx, []byte("not wasm"), rec, nil); !errors.Is(err, api.ErrBadModule) {
		t.Fatalf("offline replay on bytes that are not a module: %v; want ErrBadModule", err)
	}
}

// TestReset resets an instance past the changed point onto the new code:
// the dry run tells what it keeps, discards and runs again, and changes
// nothing; the reset goes on in a new execution on the new module; a
// failed instance comes back on fixed code.
func TestReset(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	h.startFlow(t, "past", `"x"`)
	h.passFirst(t, "past")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")
	before := h.history(t, "past")
	// 1 started, 2 waits, 3 go, 4 Step a, 5 its result, 6 custom status, 7 waits

	plan, err := h.Reset(ctx, "past", api.ResetRequest{ToEvent: 3, Module: v2.Hash[:8], DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Done || plan.Execution != 1 || plan.Events != 7 || plan.FromModule != v1.Hash || plan.Module != v2.Hash || len(plan.Discarded) != 4 || plan.Discarded[0].ID != 4 {
		t.Errorf("plan %+v", plan)
	}
	wantRerun := []api.Rerun{{Name: "Step", Input: json.RawMessage(`"a"`), Scheduled: 4, Completed: 5, Outcome: api.RerunCompleted, IfCalled: true}}
	if !reflect.DeepEqual(plan.RunAgain, wantRerun) {
		t.Errorf("run again %+v, want %+v", plan.RunAgain, wantRerun)
	}
	if n := plan.Next; len(n) != 2 || n[0].Kind != engine.ExecutionReset || n[0].ID != 4 || n[1].Kind != engine.ActivityScheduled || n[1].ID != 5 || string(n[1].Input) != `"b"` {
		t.Errorf("what the new code does next: %+v", n)
	}
	if got := h.history(t, "past"); !reflect.DeepEqual(got, before) {
		t.Fatalf("the dry run changed the history: %v", shape(got))
	}

	for _, tt := range []struct {
		name   string
		req    api.ResetRequest
		wantIs error
		want   string
	}{
		{"the middle of a step", api.ResetRequest{ToEvent: 6}, api.ErrBadInput,
			`host: bad input: instance "past", execution 1: engine: not a reset point: event 6 (CustomStatusSet) is in the middle of the step that event 5 (ActivityCompleted) began; reset to event 5 to run that step again on the code the instance goes on with, or to event 7, where the step ends`},
		{"a module that does not replay the kept events", api.ResetRequest{ToEvent: 5, Module: v2.Hash}, api.ErrDiverges,
			fmt.Sprintf(`host: the module does not replay the history: module %s, on the 5 events the reset keeps of execution 1: nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`, v2.Hash[:12])},
		{"a plan for another history", api.ResetRequest{ToEvent: 3, Execution: 1, Events: 6}, api.ErrChanged,
			`host: instance changed: instance "past" is in execution 1 with 7 events, and the reset was planned for execution 1 with 6; plan it again`},
		{"an unknown module", api.ResetRequest{ToEvent: 3, Module: "ffff0000"}, api.ErrModuleNotFound,
			`host: module not found: no deployed module's hash is or starts with "ffff0000" (durabox deploy prints a module's hash)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Reset(ctx, "past", tt.req)
			if !errors.Is(err, tt.wantIs) || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}

	plan, err = h.Reset(ctx, "past", api.ResetRequest{ToEvent: 3, Module: v2.Hash, Execution: 1, Events: 7})
	if err != nil || !plan.Done {
		t.Fatalf("reset: %+v, %v", plan, err)
	}
	h.atSecond(t, "past")
	h.goOn(t, "past")
	events := h.finish(t, "past", `"step b by v2, finished by v2"`)
	want := []string{"OrchestrationStarted(Flow)", "ExternalSubscribed(go)", "ExternalEvent(go)", "ExecutionReset", "ActivityScheduled(Step)",
		"ActivityCompleted", "CustomStatusSet", "ExternalSubscribed(go)", "ExternalEvent(go)", "OrchestrationCompleted"}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Errorf("the new execution's history %v\nwant %v", got, want)
	}
	if old, err := h.ExecutionHistory(ctx, "past", 1); err != nil || !reflect.DeepEqual(old, before) {
		t.Errorf("the reset execution's history: %v, %v; want it as it was", shape(old), err)
	}
	if rep, err := h.Replay(ctx, "past", api.ReplayRequest{}); err != nil || !rep.OK() || rep.Execution != 2 {
		t.Errorf("replay of the new execution: %+v, %v", rep, err)
	}

	// A failed instance, reset onto code that does not crash.
	h.startFlow(t, "crash", `"crash"`)
	h.atFirst(t, "crash")
	h.goOn(t, "crash")
	if inst := h.wait(t, "crash"); inst.Status != engine.StatusFailed {
		t.Fatalf("crash: %s", inst.Status)
	}
	if _, err := h.Reset(ctx, "crash", api.ResetRequest{ToEvent: 3, Module: v1.Hash}); err != nil {
		t.Fatal(err)
	}
	h.atSecond(t, "crash")
	h.goOn(t, "crash")
	h.finish(t, "crash", `"step a by v1, finished by v1"`)
}

// TestStartOnAModule: start --module picks an older module; a module that
// does not register the orchestration, or that no hash names, is refused.
func TestStartOnAModule(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, versionsPkg)
	other := h.deploy(t, versionsPkg, "main.other=yes")
	h.deploy(t, versionsPkg, "main.version=v2")
	id, err := h.StartOn(ctx, v1.Hash[:9], "Flow", json.RawMessage(`"x"`), "")
	if err != nil || h.module(t, id) != v1.Hash {
		t.Fatalf("start on v1: %v, module %s", err, h.module(t, id))
	}
	if _, err := h.StartOn(ctx, other.Hash, "Flow", nil, ""); !errors.Is(err, api.ErrUnknownOrchestration) ||
		err.Error() != fmt.Sprintf(`host: unknown orchestration "Flow" on module %s, which registers "Other"`, other.Hash[:12]) {
		t.Errorf("start on a module without Flow: %v", err)
	}
	if _, err := h.StartOn(ctx, "ffff0000", "Flow", nil, ""); !errors.Is(err, api.ErrModuleNotFound) {
		t.Errorf("start on an unknown module: %v", err)
	}
	if page, err := h.List(ctx, store.InstanceQuery{Limit: 10}); err != nil || len(page.Instances) != 1 {
		t.Errorf("%d instances after the refusals (%v); want 1", len(page.Instances), err)
	}
}
