package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	dto "github.com/prometheus/client_model/go"
)

// counted returns the value of the metric name with labels (name, value,
// …) in m, as value does for a scrape.
func counted(t *testing.T, m *metrics.Metrics, name string, labels ...string) float64 {
	t.Helper()
	families, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	return value(t, byName, name, labels...)
}

// queried is how many queries m counted with outcome, answered from
// (live, replayed or none).
func queried(t *testing.T, m *metrics.Metrics, outcome, from string) float64 {
	t.Helper()
	return counted(t, m, "durabox_queries_total", "from", from, "outcome", outcome)
}

// query runs a query that must be answered, and decodes its answer.
func (h *testHost) query(t *testing.T, id, name, data string, out any) {
	t.Helper()
	raw, err := h.Query(context.Background(), id, name, json.RawMessage(data))
	if err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("query %s answered %s: %v", name, raw, err)
	}
}

// awaitEvents waits until the history of id has n events.
func (h *testHost) awaitEvents(t *testing.T, id string, n int) []engine.Event {
	t.Helper()
	var events []engine.Event
	waitUntil(t, "the history has its events", func(ctx context.Context) (bool, error) {
		var err error
		events, err = h.History(ctx, id)
		return len(events) >= n, err
	})
	return events
}

// TestQueriesAnswerFromLiveReplayedAndFinishedInstances queries a Counter
// while it waits, on the wasm instance the host keeps in memory; after a
// restart, on a replay of its history; and once it has finished. A query
// writes nothing; one that draws random bytes answers the same from the
// live instance and from a replay, as the host puts the stream back after
// it; and the turn after a query replays rather than run on the heap the
// query changed.
func TestQueriesAnswerFromLiveReplayedAndFinishedInstances(t *testing.T) {
	t.Parallel()
	opts := host.Options{Metrics: metrics.New()}
	h := startHost(t, opts)
	h.deploy(t, "host/testdata/guests/queries")
	id := h.start(t, "Counter", `3`)
	raise := func(h *testHost) {
		t.Helper()
		if err := h.Raise(context.Background(), id, "Next", nil, false); err != nil {
			t.Fatal(err)
		}
	}
	raise(h)
	// Started, subscribed, the event, the echo scheduled and completed,
	// subscribed again: the turn that recorded it left the instance live.
	before := h.awaitEvents(t, id, 6)
	var count int
	h.query(t, id, "Count", `10`, &count)
	var drawn, again string
	h.query(t, id, "Draw", ``, &drawn)
	h.query(t, id, "Draw", ``, &again)
	if count != 11 || len(drawn) != 16 || again != drawn {
		t.Fatalf("Count(10) = %d, Draw = %q then %q; want 11, and 16 hex digits twice", count, drawn, again)
	}
	if got := queried(t, opts.Metrics, "answered", "live"); got != 3 {
		t.Fatalf("%v queries answered live, want 3", got)
	}
	if after := h.history(t, id); !reflect.DeepEqual(after, before) {
		t.Fatalf("the queries changed the history: %v, was %v", shape(after), shape(before))
	}
	misses := counted(t, opts.Metrics, "durabox_live_cache_misses_total")
	raise(h)
	h.awaitEvents(t, id, 10)
	if got := counted(t, opts.Metrics, "durabox_live_cache_misses_total"); got != misses+1 {
		t.Fatalf("the two turns after the queries missed the live cache %v times; want once: the first replays, as the instance it found answered queries, and the second runs on the one the first left", got-misses)
	}

	h.stop()
	opts = host.Options{Metrics: metrics.New()}
	h = startHostOn(t, h.st, opts)
	h.query(t, id, "Count", `0`, &count)
	h.query(t, id, "Draw", ``, &drawn)
	if count != 2 || queried(t, opts.Metrics, "answered", "replayed") != 1 || queried(t, opts.Metrics, "answered", "live") != 1 {
		t.Fatalf("after a restart Count = %d, answered by replay %v times and live %v; want 2, once each", count,
			queried(t, opts.Metrics, "answered", "replayed"), queried(t, opts.Metrics, "answered", "live"))
	}
	raise(h)
	inst := h.wait(t, id)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `3` {
		t.Fatalf("%s %s %+v", inst.Status, inst.Result, inst.Failure)
	}
	var draws []string
	h.query(t, id, "Draws", ``, &draws)
	var echoed []string
	for _, ev := range h.history(t, id) {
		if ev.Kind == engine.ActivityCompleted {
			var s string
			json.Unmarshal(ev.Result, &s)
			echoed = append(echoed, s)
		}
	}
	if len(draws) != 3 || !reflect.DeepEqual(draws, echoed) || draws[2] != drawn {
		t.Fatalf("the finished instance's Draws = %q; history echoed %q; the live instance's Draw before the last step drew %q", draws, echoed, drawn)
	}
	rep, err := h.Replay(context.Background(), id, api.ReplayRequest{})
	if err != nil || rep.Divergence != nil || rep.Failure != "" {
		t.Fatalf("the history of a queried instance does not replay: %+v, %v", rep, err)
	}
}

// TestQueriesThatFailLeaveTheInstanceUnharmed: a handler that tries to
// schedule work, one that returns an error, one that crashes its guest, a
// query the instance does not handle, and bad requests each fail the
// query, saying why; the instance then goes on to finish as if none had
// been asked. On each runtime.
func TestQueriesThatFailLeaveTheInstanceUnharmed(t *testing.T) {
	t.Parallel()
	for _, runtime := range []string{host.RuntimeWazero, host.RuntimeWasmtime} {
		t.Run(runtime, func(t *testing.T) {
			t.Parallel()
			failingQueries(t, runtime)
		})
	}
}

func failingQueries(t *testing.T, runtime string) {
	opts := host.Options{Metrics: metrics.New(), Runtime: runtime}
	h := startHost(t, opts)
	h.deploy(t, "host/testdata/guests/queries")
	id := h.start(t, "Counter", `1`)
	before := h.awaitEvents(t, id, 2)
	tests := []struct {
		query, data string
		err         error
		want        string
		outcome     string
	}{
		{"Schedule", ``, api.ErrQueryFailed, `query "Schedule" of "` + id + `": durabox: the handler of query "Schedule" called ctx.CallActivity: a query only reads the orchestration's state, and may not use its Context or futures (nothing was scheduled; the instance goes on as before)`, "failed"},
		{"Refuse", ``, api.ErrQueryFailed, `query "Refuse" of "` + id + `": not today`, "failed"},
		{"Crash", `0`, api.ErrQueryFailed, `query "Crash" of "` + id + `": it overflowed its stack (endless recursion?) (the instance is unharmed)`, "crashed"},
		{"Progress", ``, api.ErrUnknownQuery, `"` + id + `" handles no query "Progress"; it handles "Count", "Crash", "Draw", "Draws", "Refuse", "Schedule"`, "unknown"},
		{"", ``, api.ErrBadInput, `query name`, "refused"},
		{"Count", `{"a":1,"a":2}`, api.ErrBadInput, `the query's argument`, "refused"},
	}
	for _, tc := range tests {
		_, err := h.Query(context.Background(), id, tc.query, json.RawMessage(tc.data))
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("query %q: %v; want %v holding %q", tc.query, err, tc.err, tc.want)
		}
	}
	if _, err := h.Query(context.Background(), "nobody", "Count", nil); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("a query of an instance that does not exist: %v; want ErrNotFound", err)
	}
	for outcome, want := range map[string]float64{"failed": 2, "crashed": 1, "unknown": 1} {
		if got := queried(t, opts.Metrics, outcome, "live") + queried(t, opts.Metrics, outcome, "replayed"); got != want {
			t.Errorf("%v queries counted %s, want %v", got, outcome, want)
		}
	}
	if after := h.history(t, id); !reflect.DeepEqual(after, before) {
		t.Fatalf("the queries changed the history: %v, was %v", shape(after), shape(before))
	}
	if err := h.Raise(context.Background(), id, "Next", nil, false); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, id); inst.Status != engine.StatusCompleted || string(inst.Result) != `1` {
		t.Fatalf("after the failed queries the instance ended %s %s %+v", inst.Status, inst.Result, inst.Failure)
	}
}

// TestQueriesToAModuleBuiltBeforeThemAreRefused: a module whose SDK
// predates queries has no durabox_query export (here the same module with
// that export renamed, which is all that differs); it deploys and runs as
// before, and a query to its instances is refused with what to do.
func TestQueriesToAModuleBuiltBeforeThemAreRefused(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("host/testdata/guests/queries")
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.ReplaceAll(wasm, []byte("durabox_query"), []byte("durabox_quer_"))
	h := startHost(t, host.Options{})
	info, err := h.Deploy(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	id, err := h.StartOn(context.Background(), info.Hash, "Counter", json.RawMessage(`1`), "")
	if err != nil {
		t.Fatal(err)
	}
	h.awaitEvents(t, id, 2)
	_, err = h.Query(context.Background(), id, "Count", nil)
	if want := "built before queries existed (it has no durabox_query export); rebuild it with the current SDK"; !errors.Is(err, api.ErrNotQueryable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a query to a module without queries: %v; want ErrNotQueryable holding %q", err, want)
	}
	if err := h.Raise(context.Background(), id, "Next", nil, false); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, id); inst.Status != engine.StatusCompleted {
		t.Fatalf("the instance ended %s %+v", inst.Status, inst.Failure)
	}
}

// TestQueriesOverHTTP: the routes of a query on a real host answer the
// handler's result, and the refusals with their statuses: 404 for a query
// the instance does not handle, 422 for a handler that fails.
func TestQueriesOverHTTP(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/queries")
	id := h.start(t, "Counter", `1`)
	h.awaitEvents(t, id, 2)
	handler, err := server.New(h.Host, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/queries/Count?data=5", "", 200, `{"result":5}`},
		{"GET", "/queries/Count", "", 200, `{"result":0}`},
		{"POST", "/queries/Count", `{"data": 2}`, 200, `{"result":2}`},
		{"GET", "/queries/Nope", "", 404, `{"error":"no such query: \"` + id + `\" handles no query \"Nope\"; it handles \"Count\", \"Crash\", \"Draw\", \"Draws\", \"Refuse\", \"Schedule\""}`},
		{"GET", "/queries/Refuse", "", 422, `{"error":"query failed: query \"Refuse\" of \"` + id + `\": not today"}`},
		{"GET", "/queries/Count?data=x", "", 400, ``},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+"/v1/instances/"+id+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.TrimSpace(string(body)); resp.StatusCode != tc.status || (tc.want != "" && got != tc.want) {
			t.Errorf("%s %s: %d %s; want %d %s", tc.method, tc.path, resp.StatusCode, got, tc.status, tc.want)
		}
	}
}
