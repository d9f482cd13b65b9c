package host

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

// The conformance tests (engine/CONFORMANCE.md lists what each proves) run
// the orchestrations of host/testdata/guests/conformance, built from Go to
// wasm, through the host's own turns and activity calls on a SQLite file.
// drive takes the place of the dispatchers, one step at a time in a fixed
// order, so that which messages share a turn is decided by the test, not
// by timing.

// conformanceNow is the host's clock in these tests; it does not move.
var conformanceNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// conformanceHost returns a bare host on a fresh store, at conformanceNow,
// with the conformance guest deployed.
func conformanceHost(t *testing.T, opts Options) *Host {
	t.Helper()
	return conformanceHostAt(t, filepath.Join(t.TempDir(), "durabox.db"), opts)
}

// conformanceHostAt is conformanceHost on the SQLite file at path.
func conformanceHostAt(t *testing.T, path string, opts Options) *Host {
	t.Helper()
	opts.Clock = func() time.Time { return conformanceNow }
	h := newBareHostAt(t, path, opts)
	deployConformance(t, h, "v1")
	return h
}

// deployConformance builds the conformance guest as version ("v1", or the
// changed "v2"), deploys it and returns its hash.
func deployConformance(t *testing.T, h *Host, version string) string {
	t.Helper()
	return deployGuest(t, h, "host/testdata/guests/conformance", []string{"main.version=" + version})[0]
}

// startEach starts an instance of each orchestration, with input, named
// after it.
func startEach(t *testing.T, h *Host, input string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := h.Start(context.Background(), name, json.RawMessage(input), name); err != nil {
			t.Fatal(err)
		}
	}
}

// replayOn replays instance id's current execution on module (empty: its
// own), as durabox replay does.
func replayOn(t *testing.T, h *Host, id, module string) api.ReplayReport {
	t.Helper()
	rep, err := h.Replay(context.Background(), id, api.ReplayRequest{Module: module})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// describeAll describes each event as describe does.
func describeAll(events []engine.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, describe(e))
	}
	return out
}

// describe names an event briefly: "call X" for an activity called with X,
// "done X" for its result, "ExternalSubscribed X" for a wait for X.
func describe(e engine.Event) string {
	var s string
	switch e.Kind {
	case engine.ActivityScheduled:
		json.Unmarshal(e.Input, &s)
		return "call " + s
	case engine.ActivityCompleted:
		json.Unmarshal(e.Result, &s)
		return "done " + s
	case engine.ExternalEvent, engine.ExternalSubscribed:
		return string(e.Kind) + " " + e.Name
	}
	return string(e.Kind)
}

// TestChangedModuleIsCaughtOnARecordedHistory records histories on the
// conformance guest, then replays each on the v2 build, where the
// orchestration changed: every change is caught, with both sides shown,
// but a timer's delay (timers match by position).
func TestChangedModuleIsCaughtOnARecordedHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		orchestration string
		code          engine.NondeterminismCode
		want          string
	}{
		{"RenamedActivity", engine.ChangedCommand,
			`nondeterminism at event 2: history has ActivityScheduled("Echo", "card"), the orchestration emitted ScheduleActivity("Charge", "card")`},
		{"ChangedInput", engine.ChangedCommand,
			`nondeterminism at event 2: history has ActivityScheduled("Echo", "card"), the orchestration emitted ScheduleActivity("Echo", "cash")`},
		{"InsertedTimer", engine.ChangedCommand,
			`nondeterminism at event 4: history has ActivityScheduled("Echo", "b"), the orchestration emitted StartTimer(1m0s)`},
		{"RenamedChild", engine.ChangedCommand,
			`nondeterminism at event 2: history has SubOrchestrationScheduled("Child", "RenamedChild~1:2", 1), the orchestration emitted StartChild("Kid", "", 1)`},
		{"ChangedChildInput", engine.ChangedCommand,
			`nondeterminism at event 2: history has SubOrchestrationScheduled("Child", "ChangedChildInput~1:2", 1), the orchestration emitted StartChild("Child", "", 2)`},
		{"AttachedBecomesDetached", engine.ChangedCommand,
			`nondeterminism at event 2: history has SubOrchestrationScheduled("Child", "AttachedBecomesDetached~1:2", 1), the orchestration emitted StartDetachedChild("Child", "", 1)`},
		{"DetachedBecomesAttached", engine.ChangedCommand,
			`nondeterminism at event 2: history has OrchestrationChained("Child", "DetachedBecomesAttached~1:2", 1), the orchestration emitted StartChild("Child", "", 1)`},
		{"FinishesEarly", engine.ChangedCommand,
			`nondeterminism at event 4: history has ActivityScheduled("Echo", "b"), the orchestration emitted CompleteOrchestration("a")`},
		{"Reordered", engine.ReorderedCommand,
			`nondeterminism at event 2: history has ActivityScheduled("Echo", "a"), the orchestration emitted ScheduleActivity("Echo", "b"), which history has later (commands reordered)`},
		{"DroppedCall", engine.MissingCommand,
			`nondeterminism at event 3: history has ActivityScheduled("Echo", "b"), the orchestration emitted nothing`},
		{"ExtraCall", engine.ExtraCommand,
			`nondeterminism at event 4: history has OrchestrationCompleted("a"), the orchestration emitted ScheduleActivity("Echo", "audit"), which history does not have`},
		{"RenamedWait", engine.ChangedCommand,
			`nondeterminism at event 2: history has ExternalSubscribed("Paid"), the orchestration emitted WaitEvent("Settled")`},
		{"ChangedDelay", "", ""},
		{"ChangedStatus", engine.ChangedCommand,
			`nondeterminism at event 2: history has CustomStatusSet("charging the card"), the orchestration emitted SetCustomStatus("charging the card twice")`},
		{"ChangedResult", engine.ChangedCommand,
			`nondeterminism at event 4: history has OrchestrationCompleted("done by v1"), the orchestration emitted CompleteOrchestration("done by v2")`},
	}
	h := conformanceHost(t, Options{})
	ctx := context.Background()
	for _, tt := range tests {
		startEach(t, h, `null`, tt.orchestration)
	}
	drive(t, h, conformanceNow, false)
	v2 := deployConformance(t, h, "v2")
	for _, tt := range tests {
		t.Run(tt.orchestration, func(t *testing.T) {
			inst, err := h.Instance(ctx, tt.orchestration)
			if err != nil {
				t.Fatal(err)
			}
			// The history is real and replays on the module that wrote it.
			running := tt.orchestration == "RenamedWait" || tt.orchestration == "ChangedDelay"
			if want := map[bool]engine.Status{true: engine.StatusRunning, false: engine.StatusCompleted}[running]; inst.Status != want {
				t.Fatalf("recorded on v1: %s (%+v), want %s", inst.Status, inst.Failure, want)
			}
			if rep := replayOn(t, h, tt.orchestration, ""); !rep.OK() {
				t.Fatalf("v1 does not replay its own history: %v", rep.Err())
			}
			rep := replayOn(t, h, tt.orchestration, v2)
			switch d := rep.Divergence; {
			case tt.want == "" && !rep.OK():
				t.Fatalf("replay on v2: %v, want none", rep.Err())
			case tt.want == "":
			case d == nil || d.Code != tt.code || d.Message != tt.want:
				t.Fatalf("replay on v2: %+v (%v)\nwant (%s) %s", d, rep.Err(), tt.code, tt.want)
			}
		})
	}
}

// TestReplayAwareCallsSeeTheEngineFlag: the Steps orchestration logs (with
// ctx.Logger) and prints every step, with the replay flags its wasm
// instance has seen so far. With every turn replayed on a fresh instance,
// and with the instance kept live, each line reaches the host's log once,
// when its step first runs, showing exactly the flags the engine sent: R
// for each step replayed before it, then L.
func TestReplayAwareCallsSeeTheEngineFlag(t *testing.T) {
	t.Parallel()
	const steps = 4
	for _, tt := range []struct {
		name  string
		opts  Options
		flags func(step int) string
	}{
		{"every turn replayed", Options{NoLiveCache: true}, func(i int) string { return strings.Repeat("R", i) + "L" }},
		{"the instance kept live", Options{}, func(i int) string { return strings.Repeat("L", i+1) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			tt.opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
			h := conformanceHost(t, tt.opts)
			startEach(t, h, fmt.Sprint(steps), "Steps")
			drive(t, h, conformanceNow, false)
			if inst, err := h.Instance(context.Background(), "Steps"); err != nil || inst.Status != engine.StatusCompleted {
				t.Fatalf("%+v, %v", inst, err)
			}
			var want, got []string
			for i := range steps {
				want = append(want, fmt.Sprintf("logged step i=%d seen=%s", i, tt.flags(i)), fmt.Sprintf("printed step %d seen %s", i, tt.flags(i)))
			}
			for _, line := range strings.Split(log.String(), "\n") {
				if m := guestStep.FindStringSubmatch(line); m != nil {
					got = append(got, strings.Join(slices.DeleteFunc(m[1:], func(s string) bool { return s == "" }), ""))
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("guest lines in the log:\n%s\nwant:\n%s\nthe log:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), log.String())
			}
		})
	}
}

// guestStep finds the Steps orchestration's lines in a host's log, at
// info level and tagged with its instance and execution: what it printed,
// and what its logger wrote.
var guestStep = regexp.MustCompile(`level=INFO msg="guest: (printed step \d+ seen [RL]+|logged step i=\d+ seen=[RL]+)" instance=Steps execution=1$`)

// TestNewGUIDIsStableAcrossColdReplays: the GUIDs an orchestration makes go
// into its activity calls, so a replay that made others would not match
// its history. On a host that replays every turn on a fresh instance the
// instance completes, with the GUIDs a host that kept it live made.
func TestNewGUIDIsStableAcrossColdReplays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var results []string
	for _, opts := range []Options{{NoLiveCache: true}, {}} {
		h := conformanceHost(t, opts)
		startEach(t, h, `null`, "Guids")
		if _, err := h.Start(ctx, "Guids", nil, "another"); err != nil {
			t.Fatal(err)
		}
		drive(t, h, conformanceNow, false)
		for _, id := range []string{"Guids", "another"} {
			inst, err := h.Instance(ctx, id)
			if err != nil || inst.Status != engine.StatusCompleted {
				t.Fatalf("%+v, %v", inst, err)
			}
			var guids []string
			if err := json.Unmarshal(inst.Result, &guids); err != nil || len(guids) != 3 || guids[0] == guids[1] || guids[1] == guids[2] || guids[0] == guids[2] {
				t.Fatalf("GUIDs %s (%v), want three different ones", inst.Result, err)
			}
			for _, g := range guids {
				if !uuidShape.MatchString(g) {
					t.Fatalf("%q is not a version 5 UUID", g)
				}
			}
			if rep := replayOn(t, h, id, ""); !rep.OK() {
				t.Fatal(rep.Err())
			}
			results = append(results, string(inst.Result))
		}
	}
	if results[0] != results[2] || results[1] != results[3] {
		t.Fatalf("replayed every turn: %s and %s; kept live: %s and %s", results[0], results[1], results[2], results[3])
	}
	if results[0] == results[1] {
		t.Fatalf("two instances made the same GUIDs: %s", results[0])
	}
}

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestCompletionsApplyInHistoryOrder: two activities complete in one turn,
// in the reverse of the order they were called in. The orchestration sees
// them in the order they arrived, which is the order history records: the
// one that completed first wins a select, live and when the history is
// replayed on a fresh instance; the other's result, arriving for an
// operation the select cancelled, is dropped. A select made once both have
// completed takes the first in its list.
func TestCompletionsApplyInHistoryOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		opts    Options
		reverse bool
		winner  string
	}{
		{"in order, live", Options{}, false, "a"},
		{"reversed, live", Options{}, true, "b"},
		{"reversed, every turn replayed", Options{NoLiveCache: true}, true, "b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := conformanceHost(t, tt.opts)
			startEach(t, h, `null`, "FirstCompleted", "SelectWhenBothDone")
			drive(t, h, conformanceNow, tt.reverse)
			inst, err := h.Instance(ctx, "FirstCompleted")
			if err != nil || inst.Status != engine.StatusCompleted || string(inst.Result) != `"`+tt.winner+`"` {
				t.Fatalf("%s %s %+v (%v), want %q", inst.Status, inst.Result, inst.Failure, err, tt.winner)
			}
			// The loser's activity is cancelled, by its schedule event's id.
			loser := map[string]int64{"a": 3, "b": 2}[tt.winner]
			want := []string{"OrchestrationStarted", "call a", "call b", "done " + tt.winner, "ActivityCancelRequested", "OrchestrationCompleted"}
			events, err := h.History(ctx, "FirstCompleted")
			if err != nil {
				t.Fatal(err)
			}
			if got := describeAll(events); !slices.Equal(got, want) || events[4].ScheduleID != loser {
				t.Fatalf("history %q (cancelled %d), want %q with %d cancelled", got, events[4].ScheduleID, want, loser)
			}
			if rep := replayOn(t, h, "FirstCompleted", ""); !rep.OK() {
				t.Fatal(rep.Err())
			}
			// Both activities have completed; the select comes after.
			if err := h.Raise(ctx, "SelectWhenBothDone", "go", nil, false); err != nil {
				t.Fatal(err)
			}
			drive(t, h, conformanceNow, false)
			if inst, err := h.Instance(ctx, "SelectWhenBothDone"); err != nil || string(inst.Result) != `"a"` {
				t.Fatalf("%s %s %+v (%v), want the first in the list, a", inst.Status, inst.Result, inst.Failure, err)
			}
		})
	}
}

// TestCancellationIgnoredEndsCompleted: a cancellation is a request the
// orchestration sees. One that ignores it and completes ends Completed,
// with its result, and the request stays in its history; one that ends
// with the cancellation's error ends Canceled.
func TestCancellationIgnoredEndsCompleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := conformanceHost(t, Options{})
	startEach(t, h, `null`, "IgnoresCancel", "HonorsCancel")
	drive(t, h, conformanceNow, false)
	for _, id := range []string{"IgnoresCancel", "HonorsCancel"} {
		if err := h.Cancel(ctx, id, "no longer needed"); err != nil {
			t.Fatal(err)
		}
	}
	drive(t, h, conformanceNow, false)
	for _, tt := range []struct {
		id     string
		status engine.Status
		end    string
	}{
		{"IgnoresCancel", engine.StatusCompleted, `OrchestrationCompleted("finished anyway (the sleep ended with: durabox: the instance was cancelled: no longer needed)")`},
		{"HonorsCancel", engine.StatusCanceled, `OrchestrationCanceled("durabox: the instance was cancelled: no longer needed")`},
	} {
		inst, err := h.Instance(ctx, tt.id)
		if err != nil || inst.Status != tt.status {
			t.Fatalf("%s: %+v, %v; want %s", tt.id, inst, err, tt.status)
		}
		events, err := h.History(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"OrchestrationStarted", "TimerCreated", "OrchestrationCancelRequested", "TimerCancelled"}
		if got := describeAll(events); len(got) != 5 || !slices.Equal(got[:4], want) || events[4].String() != tt.end {
			t.Fatalf("%s: history %v ending %s, want %v then %s", tt.id, got, events[len(events)-1].String(), want, tt.end)
		}
	}
}

// TestCorruptHistoryFailsTheInstanceAtOnce: an instance whose history in
// the store has lost an event, or an event's failure, is not run on it:
// its next turn fails it, with what is wrong, and replaying it says the
// same. A reset that would keep the damage is refused; one to before it
// brings the instance back.
func TestCorruptHistoryFailsTheInstanceAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, damage, want string
		resetTo            int64
	}{
		{"an event lost", `DELETE FROM history WHERE instance_id = 'WaitsForGo' AND event_id = 3`,
			"engine: history is corrupt: event 4 follows event 2 (ids run from 1 without gaps)", 1},
		{"a failure lost", `UPDATE history SET payload = '{"id":3,"kind":"ActivityFailed","time":"2026-11-22T12:00:00Z","scheduleId":2}' WHERE instance_id = 'WaitsForGo' AND event_id = 3`,
			"engine: history is corrupt: event 3, ActivityFailed, has no failure", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "durabox.db")
			h := conformanceHostAt(t, path, Options{NoLiveCache: true})
			startEach(t, h, `null`, "WaitsForGo")
			drive(t, h, conformanceNow, false)
			if events, err := h.History(ctx, "WaitsForGo"); err != nil || len(events) != 4 {
				t.Fatalf("history %q, %v", describeAll(events), err)
			}
			// The store has no call that damages a history: a second
			// connection to its file does it.
			db, err := sql.Open("sqlite3", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(tt.damage); err != nil {
				t.Fatal(err)
			}
			if rep := replayOn(t, h, "WaitsForGo", ""); rep.Failure != tt.want {
				t.Fatalf("replay: %v\nwant %s", rep.Err(), tt.want)
			}
			if _, err := h.Reset(ctx, "WaitsForGo", api.ResetRequest{ToEvent: 3, DryRun: true}); !errors.Is(err, api.ErrBadInput) || !strings.HasSuffix(err.Error(), tt.want) {
				t.Fatalf("a reset that keeps event 3: %v\nwant api.ErrBadInput saying %s", err, tt.want)
			}
			if err := h.Raise(ctx, "WaitsForGo", "go", []byte(`"now"`), false); err != nil {
				t.Fatal(err)
			}
			drive(t, h, conformanceNow, false)
			inst, err := h.Instance(ctx, "WaitsForGo")
			if err != nil || inst.Status != engine.StatusFailed || inst.Failure.Message != tt.want {
				t.Fatalf("%s %+v (%v), want Failed: %s", inst.Status, inst.Failure, err, tt.want)
			}
			if _, err := h.Reset(ctx, "WaitsForGo", api.ResetRequest{ToEvent: tt.resetTo}); err != nil {
				t.Fatalf("a reset to event %d, before the damage: %v", tt.resetTo, err)
			}
			drive(t, h, conformanceNow, false)
			if err := h.Raise(ctx, "WaitsForGo", "go", []byte(`"again"`), false); err != nil {
				t.Fatal(err)
			}
			drive(t, h, conformanceNow, false)
			if inst, err := h.Instance(ctx, "WaitsForGo"); err != nil || inst.Status != engine.StatusCompleted || string(inst.Result) != `"again"` {
				t.Fatalf("after the reset: %s %s %+v (%v), want Completed with \"again\"", inst.Status, inst.Result, inst.Failure, err)
			}
		})
	}
}
