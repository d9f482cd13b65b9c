package cguest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/testhost"
	"github.com/durabox/durabox/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// TestSDKHoldsAuthorsToItsModel runs testdata/sdk.c's orchestrations on a
// host, on each runtime: code that does not repeat itself on its second
// run fails its instance naming the call, a change asked about twice in a
// run is one Patch, dbx_select_keep and dbx_cancel replay as they ran, an
// orchestration that returns DBX_DONE without ending fails saying so, and a query handler that schedules fails the query and
// leaves the instance as it was.
func TestSDKHoldsAuthorsToItsModel(t *testing.T) {
	t.Parallel()
	onSDKHost(t, func(t *testing.T, ctx context.Context, h *host.Host) {
		end := func(name string) (engine.Status, string, string) {
			t.Helper()
			if _, err := h.Start(ctx, name, nil, name); err != nil {
				t.Fatal(err)
			}
			inst, err := h.Wait(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			failure := ""
			if inst.Failure != nil {
				failure = inst.Failure.Message
			}
			return inst.Status, string(inst.Result), failure
		}
		if status, _, failure := end("Diverges"); status != engine.StatusFailed || failure != `durabox: the orchestration did not repeat itself: run again from the start, its call 1 was dbx_activity("B") where it was dbx_activity("A") before; an orchestration must decide only from its input and its futures' results (race futures with dbx_select, not dbx_ready)` {
			t.Errorf("Diverges: %s, failure %q", status, failure)
		}
		if status, result, failure := end("PatchedTwice"); status != engine.StatusCompleted || result != `"patched both times"` {
			t.Errorf("PatchedTwice: %s %s, failure %q", status, result, failure)
		}
		history, err := h.History(ctx, "PatchedTwice")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(kinds(history), "PatchRecorded"); got != 1 {
			t.Errorf("PatchedTwice recorded %d patches: %s", got, kinds(history))
		}
		if status, result, failure := end("Keep"); status != engine.StatusCompleted || result != `"the wait was cancelled"` {
			t.Errorf("Keep: %s %s, failure %q", status, result, failure)
		}
		if got, want := historyKinds(t, h, "Keep"), "OrchestrationStarted ExternalSubscribed TimerCreated TimerFired ExternalSubscribedCancelled ActivityScheduled ActivityCompleted OrchestrationCompleted"; got != want {
			t.Errorf("Keep's history:\n got %s\nwant %s", got, want)
		}
		if status, _, failure := end("DoneWithoutEnding"); status != engine.StatusFailed || failure != `durabox: orchestration "DoneWithoutEnding" returned DBX_DONE without ending: return dbx_complete, dbx_fail or dbx_continue_as_new` {
			t.Errorf("DoneWithoutEnding: %s, failure %q", status, failure)
		}

		if _, err := h.Start(ctx, "QueryMisuse", nil, "misuse"); err != nil {
			t.Fatal(err)
		}
		for !strings.Contains(historyKinds(t, h, "misuse"), "ExternalSubscribed") {
			time.Sleep(5 * time.Millisecond)
		}
		_, err = h.Query(ctx, "misuse", "schedule", nil)
		if err == nil || !strings.Contains(err.Error(), `durabox: the handler of query "schedule" called dbx_activity: a query only reads the orchestration's state`) {
			t.Errorf("a query that schedules: %v", err)
		}
		if err := h.Raise(ctx, "misuse", "go", json.RawMessage(`null`), false); err != nil {
			t.Fatal(err)
		}
		inst, err := h.Wait(ctx, "misuse")
		if err != nil {
			t.Fatal(err)
		}
		if want := "OrchestrationStarted ExternalSubscribed ExternalEvent OrchestrationCompleted"; inst.Status != engine.StatusCompleted || historyKinds(t, h, "misuse") != want {
			t.Errorf("after the query: %s, history %s, want %s", inst.Status, historyKinds(t, h, "misuse"), want)
		}
	})
}

// TestUpdatesRunAsBranches runs testdata/sdk.c's Cart on a host, on each
// runtime: an orchestration that waits for updates alone is not failed as
// waiting on nothing; an update of no handler, and one whose validator
// uses the context, are refused, leaving no trace; a handler whose
// activity fails answers with the failure and the instance goes on; a
// handler that waits goes on answering after another has; and the
// orchestration, waiting for dbx_all_handlers_finished, ends after both,
// with what the handlers changed. The instance lists its update handlers,
// and goes on after a replay.
func TestUpdatesRunAsBranches(t *testing.T) {
	t.Parallel()
	onSDKHost(t, func(t *testing.T, ctx context.Context, h *host.Host) {
		if _, err := h.Start(ctx, "Cart", nil, "cart"); err != nil {
			t.Fatal(err)
		}
		update := func(name, id, data string, wait time.Duration) (store.UpdateState, string, string) {
			t.Helper()
			u, err := h.Update(ctx, "cart", api.UpdateRequest{Name: name, ID: id, Data: json.RawMessage(data)}, wait)
			if err != nil {
				t.Fatal(err)
			}
			failure := ""
			if u.Failure != nil {
				failure = u.Failure.Message
			}
			return u.State, string(u.Result), failure
		}
		for _, c := range []struct{ name, id, data, state, result, failure string }{
			{"nope", "u1", `1`, "Refused", "", `durabox: the instance handles no update "nope" (it handles [add close fail])`},
			{"add", "u2", `""`, "Refused", "", "an empty item"},
			{"add", "u3", `"misuse"`, "Refused", "", `durabox: the validator of update "add" called dbx_timer: a validator only reads the orchestration's state, and may not use its context or futures (the update was refused)`},
			{"fail", "u4", `1`, "Failed", "", `activity "Boom" failed: boom`},
		} {
			if state, result, failure := update(c.name, c.id, c.data, time.Minute); string(state) != c.state || result != c.result || failure != c.failure {
				t.Errorf("update %s %s: %s %s, failure %q; want %s %s, failure %q", c.name, c.data, state, result, failure, c.state, c.result, c.failure)
			}
		}
		// The query for the handlers leaves its wasm instance out of turns:
		// the next turn replays what came so far on a fresh one.
		if hs, err := h.Handlers(ctx, "cart"); err != nil || fmt.Sprint(hs.Queries, hs.Updates) != "[] [add close fail]" {
			t.Errorf("the handlers: %+v, %v; want no query and the updates [add close fail]", hs, err)
		}
		update("add", "u5", `"apple"`, 0)
		if state, result, _ := update("close", "u6", ``, time.Minute); state != store.UpdateCompleted || result != `0` {
			t.Errorf("close: %s %s, want Completed 0", state, result)
		}
		if err := h.Raise(ctx, "cart", "go", json.RawMessage(`null`), true); err != nil {
			t.Fatal(err)
		}
		u, err := h.AwaitUpdate(ctx, "cart", "u5", time.Minute)
		if err != nil || u.State != store.UpdateCompleted || string(u.Result) != `1` {
			t.Errorf("add apple: %+v, %v; want Completed 1", u, err)
		}
		inst, err := h.Wait(ctx, "cart")
		if err != nil {
			t.Fatal(err)
		}
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `1` {
			t.Errorf("cart: %s %s, failure %+v; want Completed 1", inst.Status, inst.Result, inst.Failure)
		}
		want := "OrchestrationStarted UpdateAccepted ActivityScheduled ActivityFailed UpdateCompleted UpdateAccepted ExternalSubscribedPersistent UpdateAccepted UpdateCompleted ExternalEventPersistent ActivityScheduled ActivityCompleted UpdateCompleted OrchestrationCompleted"
		if got := historyKinds(t, h, "cart"); got != want {
			t.Errorf("cart's history:\n got %s\nwant %s", got, want)
		}
	})
}

// onSDKHost runs test on a host of testdata/sdk.c, on each runtime, with
// a minute to run.
func onSDKHost(t *testing.T, test func(t *testing.T, ctx context.Context, h *host.Host)) {
	wasm := Wasm(t, "internal/cguest/testdata/sdk.c")
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			h := testhost.Start(t, host.Options{Runtime: rt}, wasm)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			test(t, ctx, h)
		})
	}
}

// TestBadNameIsRefusedAtDeploy: a module whose dbx_main registers a name a
// host refuses is refused, on each runtime, by the check a deploy makes,
// naming the name and the rule.
func TestBadNameIsRefusedAtDeploy(t *testing.T) {
	t.Parallel()
	wasm := Wasm(t, "internal/cguest/testdata/sdk.c", "-DBAD_NAME")
	report, err := host.CheckModule(context.Background(), wasm, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range report.Runtimes {
		if want := `host: module refused: orchestration name "bad\x01name" holds a control character (U+0001 at byte 3): a name is 1 to 256 bytes of UTF-8 without control characters`; c.Err == nil || c.Err.Error() != want {
			t.Errorf("%s: %v", c.Runtime, c.Err)
		}
	}
}

func kinds(events []engine.Event) string {
	var out []string
	for _, e := range events {
		out = append(out, string(e.Kind))
	}
	return strings.Join(out, " ")
}

func historyKinds(t *testing.T, h *host.Host, id string) string {
	t.Helper()
	events, err := h.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return kinds(events)
}
