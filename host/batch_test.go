package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
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
	page, err := c.Audit(ctx, client.AuditRequest{Action: "batch"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Records {
		got = append(got, strings.Join([]string{r.Token, r.Target, r.Outcome, r.Detail}, " | "))
	}
	want := []string{
		"alice | 1 | ok | cancel of 2 instances matching where=customer+%3D+%22c-42%22",
		"alice |  | ok | dry run: cancel would take 2 instances matching where=customer+%3D+%22c-42%22",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the audit log's batches:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
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
