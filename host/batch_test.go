package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

const (
	// attributesGuest holds Order, which tags itself with its customer,
	// is charged, and waits for "Next".
	attributesGuest = "host/testdata/guests/attributes"
	batchSecret     = "alice-0123456789abcdef0123"
)

// batchClient serves h's API with alice's admin token and returns a
// client that carries it.
func batchClient(t *testing.T, h *host.Host) *client.Client {
	t.Helper()
	handler, err := server.New(h, server.Options{Tokens: []server.Token{{Name: "alice", Secret: batchSecret, Role: server.RoleAdmin}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return client.New(srv.URL, &client.Options{Token: batchSecret})
}

// startOrders starts an Order for each id (its customer the value) and
// waits until each waits for "Next".
func startOrders(t *testing.T, h *testHost, customers map[string]string) {
	t.Helper()
	for id, c := range customers {
		h.startAt(t, "Order", `{"customer": "`+c+`", "amount": 10}`, id)
	}
	for id := range customers {
		waitUntil(t, id+" waits for Next", func(ctx context.Context) (bool, error) {
			waits, err := h.Waits(ctx, id)
			return len(waits) > 0, err
		})
	}
}

// batchUntil waits until the batch satisfies done, and returns it.
func batchUntil(t *testing.T, c *client.Client, id int64, what string, done func(b api.Batch) bool) api.Batch {
	t.Helper()
	var b api.Batch
	waitUntil(t, what, func(ctx context.Context) (bool, error) {
		var err error
		b, err = c.Batch(ctx, id)
		return err == nil && done(b), err
	})
	return b
}

// completeBatch starts a batch of req on f and returns it once it
// completed.
func completeBatch(t *testing.T, c *client.Client, f client.BatchFilter, req api.BatchRequest) api.Batch {
	t.Helper()
	b, err := c.StartBatch(context.Background(), f, req)
	if err != nil {
		t.Fatal(err)
	}
	return batchUntil(t, c, b.ID, "the batch completes", func(b api.Batch) bool { return b.State == string(store.BatchCompleted) })
}

// byKind returns the events of kind in history.
func byKind(events []engine.Event, kind engine.EventKind) []engine.Event {
	var out []engine.Event
	for _, ev := range events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// TestBatchCancelByFilter: through the HTTP API with alice's token, a dry
// run of a cancel of the orders of customer c-42 names exactly them and
// changes nothing (no batch, every order still running); the batch then
// cancels exactly them and none else, each cancellation in its history
// by alice, and the audit log records the dry run and the batch, by
// alice. Bad requests are refused with 400, saying what was wrong.
func TestBatchCancelByFilter(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, attributesGuest)
	startOrders(t, h, map[string]string{"o1": "c-42", "o2": "c-7", "o3": "c-42", "o4": "c-9"})
	c := batchClient(t, h.Host)
	ctx := context.Background()
	f := client.BatchFilter{Filter: client.Filter{Where: `customer = "c-42"`}}
	req := api.BatchRequest{Action: api.BatchCancel, Reason: "withdrawn offer"}

	dry, err := c.DryRunBatch(ctx, f, req)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dry.IDs)
	if dry.Matched != 2 || !slices.Equal(dry.IDs, []string{"o1", "o3"}) || !dry.DryRun {
		t.Fatalf("dry run: %+v; want o1 and o3", dry)
	}
	if all, err := c.Batches(ctx); err != nil || len(all) != 0 {
		t.Fatalf("after a dry run, the batches are %+v (%v); want none", all, err)
	}
	for _, id := range []string{"o1", "o2", "o3", "o4"} {
		if inst, err := h.Instance(ctx, id); err != nil || inst.Status != engine.StatusRunning || len(byKind(h.history(t, id), engine.OrchestrationCancelRequested)) != 0 {
			t.Fatalf("after a dry run, %s is %s (%v); want it running, untouched", id, inst.Status, err)
		}
	}

	b, err := c.StartBatch(ctx, f, req)
	if err != nil {
		t.Fatal(err)
	}
	if b.Matched != 2 || b.By != "alice" || b.Action != api.BatchCancel || b.Filter != "where=customer+%3D+%22c-42%22" {
		t.Fatalf("the batch started: %+v", b)
	}
	b = batchUntil(t, c, b.ID, "the batch completes", func(b api.Batch) bool { return b.State == string(store.BatchCompleted) })
	if b.Done != 2 || b.Failed != 0 || b.Skipped != 0 || b.LastInstance != "o3" {
		t.Fatalf("the batch at its end: %+v; want 2 done, at o3", b)
	}
	for id, want := range map[string]engine.Status{"o1": engine.StatusCanceled, "o3": engine.StatusCanceled} {
		if inst := h.wait(t, id); inst.Status != want {
			t.Fatalf("%s ended %s; want %s", id, inst.Status, want)
		}
		asked := byKind(h.history(t, id), engine.OrchestrationCancelRequested)
		if len(asked) != 1 || asked[0].By != "alice" || asked[0].Reason != "withdrawn offer" {
			t.Fatalf("%s's cancellations: %+v; want one, by alice, with the batch's reason", id, asked)
		}
	}
	for _, id := range []string{"o2", "o4"} {
		if inst, err := h.Instance(ctx, id); err != nil || inst.Status != engine.StatusRunning || len(byKind(h.history(t, id), engine.OrchestrationCancelRequested)) != 0 {
			t.Fatalf("%s, which the filter does not select, is %s (%v); want it running, untouched", id, inst.Status, err)
		}
	}
	batchAudit(t, c,
		"alice | 1 | ok | cancel of 2 instances matching where=customer+%3D+%22c-42%22",
		"alice |  | ok | dry run: cancel would take 2 instances matching where=customer+%3D+%22c-42%22")
	if _, err := c.StopBatch(ctx, b.ID); !isStatus(err, 409) {
		t.Fatalf("stopping a completed batch: %v; want 409", err)
	}

	for _, bad := range []struct {
		name string
		f    client.BatchFilter
		req  api.BatchRequest
		want string
	}{
		{"unknown action", f, api.BatchRequest{Action: "pause"}, `the action "pause" is not one of cancel, terminate, raise, reset, upgrade`},
		{"bad filter", client.BatchFilter{Filter: client.Filter{Where: `customer = `}}, req, `where="customer = "`},
		{"no filter", client.BatchFilter{}, req, "say which instances the batch takes"},
		{"raise without an event", f, api.BatchRequest{Action: api.BatchRaise}, "a batch's raise needs the name of the event to raise (event)"},
		{"an argument of another action", f, api.BatchRequest{Action: api.BatchCancel, Event: "Next"}, "a batch's cancel takes no event; it takes reason"},
		{"upgrade without a module", f, api.BatchRequest{Action: api.BatchUpgrade}, "a batch's upgrade needs the module"},
		{"bad reset point", f, api.BatchRequest{Action: api.BatchReset, ResetTo: "yesterday"}, `the reset point "yesterday" is not last-failure, start or an event's number`},
		{"negative rate", f, api.BatchRequest{Action: api.BatchCancel, Rate: -1}, "the rate is -1"},
	} {
		for _, dry := range []bool{true, false} {
			var err error
			if dry {
				_, err = c.DryRunBatch(ctx, bad.f, bad.req)
			} else {
				_, err = c.StartBatch(ctx, bad.f, bad.req)
			}
			if !isStatus(err, 400) || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%s (dry run %v): %v; want 400 saying %q", bad.name, dry, err, bad.want)
			}
		}
	}
	if all, _ := c.Batches(ctx); len(all) != 1 {
		t.Fatalf("the bad requests left batches: %+v", all)
	}
}

// batchAudit fails the test unless the audit log's records of batches
// (action batch), newest first, are want, each as "token | target |
// outcome | detail".
func batchAudit(t *testing.T, c *client.Client, want ...string) {
	t.Helper()
	page, err := c.Audit(context.Background(), client.AuditRequest{Action: "batch"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Records {
		got = append(got, strings.Join([]string{r.Token, r.Target, r.Outcome, r.Detail}, " | "))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the audit log's batches:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// dryRunNames runs a dry run of req on f and fails the test unless it
// lists exactly ids, and changes nothing: no batch, and each instance of
// the test (all) with the history it had.
func dryRunNames(t *testing.T, h *testHost, c *client.Client, f client.BatchFilter, req api.BatchRequest, ids, all []string) {
	t.Helper()
	ctx := context.Background()
	before := map[string][]engine.Event{}
	for _, id := range all {
		before[id] = h.history(t, id)
	}
	dry, err := c.DryRunBatch(ctx, f, req)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dry.IDs)
	if dry.Matched != len(ids) || !slices.Equal(dry.IDs, ids) || !dry.DryRun {
		t.Fatalf("dry run: %+v; want %v", dry, ids)
	}
	if batches, err := c.Batches(ctx); err != nil || len(batches) != 0 {
		t.Fatalf("after a dry run, the batches are %+v (%v); want none", batches, err)
	}
	for id, events := range before {
		if got := h.history(t, id); !reflect.DeepEqual(got, events) {
			t.Fatalf("the dry run changed %s: %v", id, shape(got))
		}
	}
}

// TestBatchReset: through the HTTP API with alice's token, a reset to
// the last failure of the failed instances whose ids begin with f, onto
// a module that does not crash, after a dry run that names them and
// changes nothing: each goes on from before its failure, on that module,
// with the reset by alice in its history, and finishes; a failed
// instance the filter does not select, and a running one, are untouched.
// A reset to the last failure of an instance with none skips it; a reset
// to the start runs it again from its start.
func TestBatchReset(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	v1 := h.deploy(t, versionsPkg)
	v2 := h.deploy(t, versionsPkg, "main.version=v2")
	// v2 crashes on "crash" after the first go; v1 does not.
	for _, id := range []string{"f1", "f2", "g1"} {
		h.startFlow(t, id, `"crash"`)
		h.atFirst(t, id)
		h.goOn(t, id)
		if inst := h.wait(t, id); inst.Status != engine.StatusFailed {
			t.Fatalf("%s ended %s; want it failed", id, inst.Status)
		}
	}
	h.startFlow(t, "f3", `"x"`)
	h.atFirst(t, "f3")
	c := batchClient(t, h.Host)
	failed := client.BatchFilter{Filter: client.Filter{IDPrefix: "f", Statuses: []engine.Status{engine.StatusFailed}}}
	req := api.BatchRequest{Action: api.BatchReset, ResetTo: api.ResetLastFailure, Module: v1.Hash[:12]}
	dryRunNames(t, h, c, failed, req, []string{"f1", "f2"}, []string{"f1", "f2", "f3", "g1"})
	untouched := map[string][]engine.Event{"g1": h.history(t, "g1"), "f3": h.history(t, "f3")}

	b := completeBatch(t, c, failed, req)
	if b.Matched != 2 || b.Done != 2 || b.Failed != 0 || b.Skipped != 0 || b.By != "alice" {
		t.Fatalf("the batch at its end: %+v; want 2 matched, 2 done, by alice", b)
	}
	for _, id := range []string{"f1", "f2"} {
		// 1 started, 2 waits, 3 go kept; the crash is not.
		events := h.atSecond(t, id)
		reset := byKind(events, engine.ExecutionReset)
		if len(reset) != 1 || reset[0].ID != 4 || reset[0].By != "alice" || h.module(t, id) != v1.Hash {
			t.Fatalf("%s after the batch: module %s, history %v, resets %+v; want a reset to event 3 by alice, on v1", id, h.module(t, id)[:12], shape(events), reset)
		}
		h.goOn(t, id)
		h.finish(t, id, `"step a by v1, finished by v1"`)
	}
	for id, events := range untouched {
		if got := h.history(t, id); !reflect.DeepEqual(got, events) || h.module(t, id) != v2.Hash {
			t.Fatalf("%s, which the filter does not select, changed: %v on %s", id, shape(got), h.module(t, id)[:12])
		}
	}

	// f3 runs and has failed in nothing: a reset to its last failure
	// skips it, a reset to its start takes it back to its first event.
	f3 := client.BatchFilter{Filter: client.Filter{IDPrefix: "f3"}}
	none := completeBatch(t, c, f3, api.BatchRequest{Action: api.BatchReset, ResetTo: api.ResetLastFailure})
	if none.Matched != 1 || none.Skipped != 1 || none.Done != 0 {
		t.Fatalf("a reset to the last failure of an instance with none: %+v; want it skipped", none)
	}
	if got := h.history(t, "f3"); !reflect.DeepEqual(got, untouched["f3"]) {
		t.Fatalf("the skipped reset changed f3: %v", shape(got))
	}
	start := completeBatch(t, c, f3, api.BatchRequest{Action: api.BatchReset, ResetTo: api.ResetStart})
	if start.Done != 1 {
		t.Fatalf("a reset to the start: %+v; want f3 done", start)
	}
	events := h.until(t, "f3", "the wait after the reset", func(events []engine.Event) bool {
		return count(events, engine.ExecutionReset) == 1 && count(events, engine.ExternalSubscribed) == 1
	})
	if want := []string{"OrchestrationStarted(Flow)", "ExecutionReset", "ExternalSubscribed(go)"}; !slices.Equal(shape(events), want) || events[1].By != "alice" {
		t.Fatalf("f3 after a reset to its start: %v, by %q; want %v, by alice", shape(events), events[1].By, want)
	}
	batchAudit(t, c,
		"alice | 3 | ok | reset of 1 instances matching idPrefix=f3",
		"alice | 2 | ok | reset of 1 instances matching idPrefix=f3",
		"alice | 1 | ok | reset of 2 instances matching idPrefix=f&status=Failed",
		"alice |  | ok | dry run: reset would take 2 instances matching idPrefix=f&status=Failed")
}

// TestBatchUpgrade: through the HTTP API with alice's token, an upgrade
// to v2 of the instances whose ids begin with u-, after a dry run that
// names them and changes nothing: those whose history v2 replays (at
// their first wait) move, with the move by alice in their history, and
// finish on v2; the one past the point where v2 differs is counted
// failed, with the divergence, and stays on v1 as it was; the one on v2
// already is skipped; an instance the filter does not select is
// untouched.
func TestBatchUpgrade(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	v1 := h.deploy(t, versionsPkg)
	for _, id := range []string{"u-w1", "u-w2", "o-w1"} {
		h.startFlow(t, id, `"x"`)
		h.atFirst(t, id)
	}
	h.startFlow(t, "u-p1", `"x"`)
	h.passFirst(t, "u-p1")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")
	h.startFlow(t, "u-v2", `"x"`)
	h.atFirst(t, "u-v2")
	c := batchClient(t, h.Host)
	f := client.BatchFilter{Filter: client.Filter{IDPrefix: "u-"}}
	req := api.BatchRequest{Action: api.BatchUpgrade, Module: v2.Hash[:12]}
	dryRunNames(t, h, c, f, req, []string{"u-p1", "u-v2", "u-w1", "u-w2"}, []string{"u-p1", "u-v2", "u-w1", "u-w2", "o-w1"})
	untouched := map[string][]engine.Event{"u-p1": h.history(t, "u-p1"), "o-w1": h.history(t, "o-w1")}

	b := completeBatch(t, c, f, req)
	if b.Matched != 4 || b.Done != 2 || b.Failed != 1 || b.Skipped != 1 || b.By != "alice" {
		t.Fatalf("the batch at its end: %+v; want 4 matched, 2 done, 1 failed, 1 skipped, by alice", b)
	}
	const divergence = `does not replay its history: nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`
	if len(b.Failures) != 1 || b.Failures[0].InstanceID != "u-p1" || !strings.Contains(b.Failures[0].Error, divergence) || b.LastError != b.Failures[0].Error {
		t.Fatalf("the batch's failures: %+v, last error %q; want u-p1's, saying it %s", b.Failures, b.LastError, divergence)
	}
	for _, id := range []string{"u-w1", "u-w2"} {
		events := h.history(t, id)
		last := events[len(events)-1]
		if h.module(t, id) != v2.Hash || last.Kind != engine.ModuleChanged || last.FromModule != v1.Hash || last.Module != v2.Hash || last.By != "alice" {
			t.Fatalf("%s after the batch: module %s, history %v ending %+v; want it moved to v2 by alice", id, h.module(t, id)[:12], shape(events), last)
		}
		h.passFirst(t, id)
		h.goOn(t, id)
		h.finish(t, id, `"step b by v2, finished by v2"`)
	}
	for id, events := range untouched {
		if got := h.history(t, id); !reflect.DeepEqual(got, events) || h.module(t, id) != v1.Hash {
			t.Fatalf("%s changed: %v on %s; want it as it was, on v1", id, shape(got), h.module(t, id)[:12])
		}
	}
	if moved := byKind(h.history(t, "u-v2"), engine.ModuleChanged); len(moved) != 0 {
		t.Fatalf("u-v2, on v2 already, was moved: %+v", moved)
	}
	batchAudit(t, c,
		"alice | 1 | ok | upgrade of 4 instances matching idPrefix=u-",
		"alice |  | ok | dry run: upgrade would take 4 instances matching idPrefix=u-")
}

// isStatus reports whether err is the client's error for an answer of
// status.
func isStatus(err error, status int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.StatusCode == status
}

// TestBatchResumesAfterRestart: a batch that raises "Next" at 5 orders,
// one a second, on a fake clock that stands still: the host takes the
// first and no more (the rate), and stops; a host on the same file takes
// the batch up at the order after, and, as the clock moves on, the
// rest. Each order took its event once: 5 done, none skipped (a second
// raise would find the order finished), one Next in each history.
func TestBatchResumesAfterRestart(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(at0)
	opts := host.Options{Clock: clock.Now, BatchPoll: 5 * time.Millisecond}
	path := filepath.Join(t.TempDir(), "durabox.db")
	open := func() *sqlite.Store { return openSQLite(t, path) }
	st := open()
	h := startHostOn(t, st, opts)
	h.deploy(t, attributesGuest)
	ids := []string{"o1", "o2", "o3", "o4", "o5"}
	startOrders(t, h, map[string]string{"o1": "c", "o2": "c", "o3": "c", "o4": "c", "o5": "c"})
	c := batchClient(t, h.Host)
	ctx := context.Background()
	b, err := c.StartBatch(ctx, client.BatchFilter{Filter: client.Filter{Name: "Order"}}, api.BatchRequest{Action: api.BatchRaise, Event: "Next", Data: json.RawMessage(`"ship"`), Rate: 1})
	if err != nil {
		t.Fatal(err)
	}
	batchUntil(t, c, b.ID, "the first order taken", func(b api.Batch) bool { return b.Done == 1 })
	h.stop()
	st.Close()
	if got, err := storedBatch(t, open, b.ID); got.Done != 1 || got.LastInstance != "o1" || got.State != store.BatchRunning {
		t.Fatalf("the batch once the host stopped: %+v (%v); want 1 done, at o1, running", got, err)
	}

	st = open()
	h = startHostOn(t, st, opts)
	t.Cleanup(func() { st.Close() })
	c = batchClient(t, h.Host)
	batchUntil(t, c, b.ID, "the second order taken, at once", func(b api.Batch) bool { return b.Done == 2 })
	for n := int64(3); n <= 5; n++ {
		clock.Add(time.Second)
		batchUntil(t, c, b.ID, "the next order taken", func(b api.Batch) bool { return b.Done == n })
	}
	b = batchUntil(t, c, b.ID, "the batch completes", func(b api.Batch) bool { return b.State == string(store.BatchCompleted) })
	if b.Done != 5 || b.Skipped != 0 || b.Failed != 0 {
		t.Fatalf("the batch at its end: %+v; want 5 done, none skipped or failed", b)
	}
	for _, id := range ids {
		if inst := h.wait(t, id); inst.Status != engine.StatusCompleted {
			t.Fatalf("%s ended %s: %v", id, inst.Status, inst.Failure)
		}
		if next := byKind(h.history(t, id), engine.ExternalEvent); len(next) != 1 || next[0].Name != "Next" || next[0].By != "alice" {
			t.Fatalf("%s's events raised: %+v; want one Next, by alice", id, next)
		}
	}
}

// openSQLite opens the SQLite store at path.
func openSQLite(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// storedBatch reads batch id from a store open opens, and closes it.
func storedBatch(t *testing.T, open func() *sqlite.Store, id int64) (store.Batch, error) {
	t.Helper()
	st := open()
	defer st.Close()
	return st.GetBatch(context.Background(), id)
}

// TestBatchRetention: on a fake clock, a sweep deletes the batches that
// ended (completed or stopped) more than Retention ago, with their
// items, and counts them in what it returns and in its log line; a
// running batch stays, as old as they, and so does one that ended later.
func TestBatchRetention(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(at0)
	logs := &records{}
	h := startHost(t, host.Options{Clock: clock.Now, Retention: time.Hour, SweepInterval: 24 * time.Hour, BatchPoll: 5 * time.Millisecond, Logger: slog.New(logs)})
	h.deploy(t, attributesGuest)
	startOrders(t, h, map[string]string{"o1": "c-1", "o2": "c-2", "o3": "c-2", "o4": "c-3", "o5": "c-3", "o6": "c-4"})
	c := batchClient(t, h.Host)
	ctx := context.Background()
	start := func(customer string, rate float64) api.Batch {
		t.Helper()
		b, err := c.StartBatch(ctx, client.BatchFilter{Filter: client.Filter{Where: `customer = "` + customer + `"`}}, api.BatchRequest{Action: api.BatchCancel, Reason: "r", Rate: rate})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// completed takes o1; stopped and running each take their first
	// order and wait 10,000 s for the next, a time the clock never
	// reaches; stopped is stopped there.
	completed := start("c-1", 0)
	batchUntil(t, c, completed.ID, "c-1's batch completes", func(b api.Batch) bool { return b.State == string(store.BatchCompleted) })
	stopped, running := start("c-2", 0.0001), start("c-3", 0.0001)
	batchUntil(t, c, stopped.ID, "c-2's first order taken", func(b api.Batch) bool { return b.Done == 1 })
	batchUntil(t, c, running.ID, "c-3's first order taken", func(b api.Batch) bool { return b.Done == 1 })
	if _, err := c.StopBatch(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	// A batch counts an order done once it has asked for its cancel; the
	// turn that ends the order follows, at the clock's time then: the
	// orders must have ended before the clock moves on.
	cancelled := func(want int) {
		t.Helper()
		waitUntil(t, fmt.Sprint(want, " orders cancelled"), func(ctx context.Context) (bool, error) {
			n := 0
			for _, id := range []string{"o1", "o2", "o3", "o4", "o5", "o6"} {
				inst, err := h.Instance(ctx, id)
				if err != nil {
					return false, err
				}
				if inst.Status == engine.StatusCanceled {
					n++
				}
			}
			return n == want, nil
		})
	}
	cancelled(3)
	sweep := func(want host.Swept) {
		t.Helper()
		got, err := h.Sweep(ctx)
		if err != nil || got.Instances != want.Instances || got.Executions != want.Executions || got.Batches != want.Batches {
			t.Fatalf("Sweep at +%s = %+v, %v; want %d instances, %d executions, %d batches", clock.Now().Sub(at0), got, err, want.Instances, want.Executions, want.Batches)
		}
	}
	clock.Add(59 * time.Minute)
	later := start("c-4", 0)
	batchUntil(t, c, later.ID, "c-4's batch completes", func(b api.Batch) bool { return b.State == string(store.BatchCompleted) })
	cancelled(4)
	sweep(host.Swept{})
	clock.Add(2 * time.Minute)
	// o1, o2 and o4, cancelled at the start, and completed and stopped.
	sweep(host.Swept{Instances: 3, Batches: 2})
	logs.wait(t, "retention applied retention=1h0m0s instances=3 executions=0 batches=2")
	for _, b := range []api.Batch{completed, stopped} {
		if _, err := c.Batch(ctx, b.ID); !isStatus(err, 404) {
			t.Fatalf("batch %d after the sweep: %v; want 404", b.ID, err)
		}
	}
	all, err := c.Batches(ctx)
	if err != nil || len(all) != 2 || all[0].ID != later.ID || all[1].ID != running.ID || all[1].State != string(store.BatchRunning) || all[1].Done != 1 {
		t.Fatalf("the batches after the sweep: %+v, %v; want c-4's, then c-3's, running, 1 done", all, err)
	}
	clock.Add(time.Hour)
	sweep(host.Swept{Instances: 1, Batches: 1})
	if all, err := c.Batches(ctx); err != nil || len(all) != 1 || all[0].ID != running.ID {
		t.Fatalf("the batches after the second sweep: %+v, %v; want c-3's alone, running", all, err)
	}
}
