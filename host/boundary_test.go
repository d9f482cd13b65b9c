package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// boundaryGuest speaks the ABI by hand, to hand the host what the SDK
// never would.
const boundaryGuest = "host/testdata/guests/boundary"

// nameRule is the rule every name breaks in the refusals below.
const nameRule = "a name is 1 to 256 bytes of UTF-8 without control characters"

// emitInput is the input of the boundary guest's Emit: emit kind, with
// text, in its first step.
func emitInput(kind, text string) string {
	return `{"kind":"` + kind + `","hex":"` + hex.EncodeToString([]byte(text)) + `"}`
}

// TestDeployRefusesBadNames deploys modules whose manifests register a name
// that breaks the rule: each is refused, naming the name, escaped and cut
// short, and the rule; Check (durabox build) refuses the last the same way.
func TestDeployRefusesBadNames(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, boundaryGuest)
	tests := []struct {
		name, variable, value, want string
	}{
		{"an empty orchestration name", "orchestration", "",
			`orchestration name "" is empty: ` + nameRule},
		{"a NUL", "orchestration", "Pay\x00ment",
			`orchestration name "Pay\x00ment" holds a control character (U+0000 at byte 3): ` + nameRule},
		{"invalid UTF-8", "orchestration", "Pay\xffment",
			`orchestration name "Pay\xffment" is not valid UTF-8 (at byte 3): ` + nameRule},
		{"a control character", "orchestration", "Pay\nment",
			`orchestration name "Pay\nment" holds a control character (U+000A at byte 3): ` + nameRule},
		{"an over-long name", "orchestration", strings.Repeat("n", 257),
			`orchestration name "` + strings.Repeat("n", 64) + `"… is 257 bytes: ` + nameRule},
		{"an activity name that is not UTF-8", "activity", "Charge\xc3",
			`activity name "Charge\xc3" is not valid UTF-8 (at byte 6): ` + nameRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm, err := guestbuild.Wasm(boundaryGuest, "main."+tt.variable+"=x"+hex.EncodeToString([]byte(tt.value)))
			if err != nil {
				t.Fatal(err)
			}
			want := "host: module refused: " + tt.want
			info, err := h.Deploy(context.Background(), wasm)
			if !errors.Is(err, api.ErrBadModule) || err.Error() != want {
				t.Errorf("Deploy: %+v, %v\nwant %s", info, err, want)
			}
			if tt.variable != "activity" {
				return
			}
			if err := checkOn(t, wasm, host.RuntimeWazero); err == nil || err.Error() != want {
				t.Errorf("Check: %v\nwant %s", err, want)
			}
		})
	}
	modules, err := h.Modules(context.Background())
	if err != nil || len(modules) != 1 {
		t.Errorf("modules stored: %+v, %v; want the one deployed first", modules, err)
	}
}

// TestGuestNamesAndTextsFailOnlyTheirInstance runs orchestrations that emit
// a name, a text or JSON that breaks the rules, in their first step, then
// a timer: each fails its own instance, with the same failure on a host
// that keeps it live and on one that replays every turn cold (as after a
// restart), and in a replay of its history; a healthy instance beside it
// completes, and the metrics are served.
func TestGuestNamesAndTextsFailOnlyTheirInstance(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	live := startHost(t, host.Options{Metrics: m})
	cold := startHost(t, host.Options{NoLiveCache: true})
	live.deploy(t, boundaryGuest)
	cold.deploy(t, boundaryGuest)
	handler, err := server.New(live.Host, server.Options{Metrics: live.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	const refused = "engine: the orchestration's command 1 is refused: "
	const crashed = "orchestration crashed applying event 1: its command 1 is refused: "
	tests := []struct {
		kind, text, want string
	}{
		{"activity", "Charge\xff", refused + `activity name "Charge\xff" is not valid UTF-8 (at byte 6): ` + nameRule},
		{"event", "go\x00", refused + `event name "go\x00" holds a control character (U+0000 at byte 2): ` + nameRule},
		{"persistent", strings.Repeat("e", 300), refused + `event name "` + strings.Repeat("e", 64) + `"… is 300 bytes: ` + nameRule},
		{"patch", "fix\xff", refused + `change id "fix\xff" is not valid UTF-8 (at byte 3): ` + nameRule},
		{"status", "status \xff\xfe", refused + `custom status "status \xff\xfe" is not valid UTF-8 (at byte 7): a text is UTF-8`},
		{"child", "Child\xff", refused + `child's orchestration name "Child\xff" is not valid UTF-8 (at byte 5): ` + nameRule},
		{"childid", "id\xff", refused + `child's instance id "id\xff" is not valid UTF-8 (at byte 2): ` + nameRule},
		{"failure", "boom \xff", refused + `failure message "boom \xff" is not valid UTF-8 (at byte 5): a text is UTF-8`},
		{"details", "\xff", refused + `failure details "\xff" is not valid UTF-8 (at byte 0): a text is UTF-8`},
		{"result", "\"\xff\"", crashed + `the result is not I-JSON (RFC 7493): invalid UTF-8 at byte 1`},
		{"input", `{"a":1,"a":2}`, crashed + `the activity input is not I-JSON (RFC 7493): the name "a" appears twice in one object`},
		{"input", `"\ud800"`, crashed + `the activity input is not I-JSON (RFC 7493): invalid surrogate pair ` + "`" + `\ud800"` + "`" + ` in string at byte 1`},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			for _, h := range []struct {
				name string
				*testHost
			}{{"live", live}, {"cold", cold}} {
				inst := h.run(t, "Emit", emitInput(tt.kind, tt.text))
				if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != tt.want {
					t.Errorf("%s: status %s result %s failure %+v\nwant failure %q", h.name, inst.Status, inst.Result, inst.Failure, tt.want)
					continue
				}
				rep, err := h.Replay(context.Background(), inst.ID, api.ReplayRequest{})
				if err != nil || rep.Failure != tt.want {
					t.Errorf("%s: replay: %+v, %v\nwant failure %q", h.name, rep, err, tt.want)
				}
			}
			healthy := live.run(t, "Emit", emitInput("none", ""))
			if healthy.Status != engine.StatusCompleted || string(healthy.Result) != `"done"` {
				t.Fatalf("the healthy instance: status %s result %s failure %+v", healthy.Status, healthy.Result, healthy.Failure)
			}
			scrape(t, handler)
		})
	}
}

// TestActivityOutputThatIsNotJSONFailsItsAttempt runs activities whose
// output is not I-JSON, or whose failure is not UTF-8: each attempt fails
// with a message naming the activity, and GET /metrics still serves,
// counting the failures.
func TestActivityOutputThatIsNotJSONFailsItsAttempt(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{Metrics: metrics.New()})
	h.deploy(t, boundaryGuest)
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		activity, output, want string
	}{
		{"Output", "\"caf\xe9\"", `activity "Output": its output is not I-JSON (RFC 7493): invalid UTF-8 at byte 4`},
		{"Output", `{"id":1,"id":2}`, `activity "Output": its output is not I-JSON (RFC 7493): the name "id" appears twice in one object`},
		{"Failure", "caf\xe9", `activity "Failure": failure message "caf\xe9" is not valid UTF-8 (at byte 3): a text is UTF-8`},
	}
	for _, tt := range tests {
		input := `{"activity":"` + tt.activity + `","hex":"` + hex.EncodeToString([]byte(tt.output)) + `"}`
		inst := h.run(t, "Call", input)
		if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != tt.want {
			t.Errorf("%s(%q): status %s result %s failure %+v\nwant failure %q", tt.activity, tt.output, inst.Status, inst.Result, inst.Failure, tt.want)
		}
	}
	m := scrape(t, handler)
	if n := value(t, m, "durabox_activities_total", "activity", "Output", "outcome", "failed"); n != 2 {
		t.Errorf("durabox_activities_total of Output, failed: %v, want 2", n)
	}
}

// TestStoredNameThatIsNotUTF8DoesNotStopTheHost starts a host on a
// database where an older host, which refused no name, left an activity
// task whose name is not UTF-8: the host runs it, counts it in its
// metrics under the name with U+FFFD (Prometheus's client panics on a
// label that is not UTF-8), and serves on; the instance completes.
func TestStoredNameThatIsNotUTF8DoesNotStopTheHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := metrics.New()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{OnCommit: m.ObserveCommit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	wasm, err := guestbuild.Wasm(boundaryGuest)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	hash, now := hex.EncodeToString(sum[:]), time.Now()
	if err := st.PutModule(ctx, store.Module{Hash: hash, Wasm: wasm, Orchestrations: []string{"Emit", "Call"}, Activities: []string{"Output", "Failure"}, DeployedAt: now}); err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage("{\"activity\":\"Output\xff\",\"hex\":\"31\"}")
	if err := st.CreateInstance(ctx, store.NewInstance{ID: "old", Name: "Call", ModuleHash: hash, Input: input, Now: now}); err != nil {
		t.Fatal(err)
	}
	items, err := st.LockNextInstances(ctx, now, time.Minute, 1, nil)
	if err != nil || len(items) != 1 {
		t.Fatalf("lock: %v, %v", items, err)
	}
	task := engine.ActivityTask{ScheduleID: 2, Name: "Output\xff", Input: json.RawMessage(`"31"`)}
	c := store.TurnCommit{
		InstanceID: "old", ExecutionID: 1, LockToken: items[0].LockToken, Now: now, Status: engine.StatusRunning,
		NewEvents: []engine.Event{
			{ID: 1, Kind: engine.OrchestrationStarted, Time: now, Name: "Call", InstanceID: "old", Input: input},
			{ID: 2, Kind: engine.ActivityScheduled, Time: now, Name: task.Name, Input: task.Input},
		},
		Activities: []engine.ActivityTask{task},
	}
	for _, m := range items[0].Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	if err := st.CommitTurn(ctx, c); err != nil {
		t.Fatal(err)
	}
	h := startHostOn(t, st, host.Options{Metrics: m})
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, "old"); inst.Status != engine.StatusCompleted || string(inst.Result) != "1" {
		t.Errorf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	if n := value(t, scrape(t, handler), "durabox_activities_total", "activity", "Output\uFFFD", "outcome", "completed"); n != 1 {
		t.Errorf("durabox_activities_total of Output\uFFFD, completed: %v, want 1", n)
	}
}
