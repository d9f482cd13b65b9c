package host_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/worker"
)

// collector is an OTLP/HTTP collector in the test's process: it decodes
// each ExportTraceServiceRequest posted to /v1/traces and keeps its
// spans, with the service.name of their resource.
type collector struct {
	*httptest.Server
	mu    sync.Mutex
	spans []span
}

// span is a span a collector received.
type span struct {
	*tracepb.Span
	service string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			t.Errorf("the collector got %s %s (%s): %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
			http.Error(w, "not an OTLP export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			service := attr(rs.Resource.GetAttributes(), "service.name")
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					c.spans = append(c.spans, span{Span: s, service: service})
				}
			}
		}
		c.mu.Unlock()
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	}))
	t.Cleanup(c.Close)
	return c
}

// received returns the spans received so far.
func (c *collector) received() []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// attr returns the value of attribute key among attrs, as text; empty
// when there is none.
func attr(attrs []*commonpb.KeyValue, key string) string {
	for _, kv := range attrs {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return fmt.Sprint(v.IntValue)
		}
	}
	return ""
}

// TestTraceOfAnInstance runs an instance that calls one activity a
// worker runs (through the HTTP API) and one the host runs, which makes an
// HTTP request, with the host and the worker exporting their spans over
// OTLP/HTTP to a collector in the test's process, and a query the
// instance does not handle. Every span is in the trace whose id is the
// instance id's (the first 16 bytes of its SHA-256); the instance's span
// is the root, and its id the next 8 bytes; the turns, both activity
// attempts of the host and the query are its children; the worker's span
// is the child of the host's span of the worker's attempt, whose context
// the task carried; the HTTP request the host made for the activity
// carried the traceparent of the host's span of that attempt.
func TestTraceOfAnInstance(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	ctx := context.Background()
	var (
		mu          sync.Mutex
		traceparent []string
	)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparent = append(traceparent, r.Header.Get("traceparent"))
		mu.Unlock()
		fmt.Fprint(w, "page")
	}))
	defer site.Close()
	siteURL, _ := url.Parse(site.URL)

	exp, err := serving.TraceExporter(ctx, col.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, host.Options{TraceExporter: exp, HTTPAllowList: []string{siteURL.Host}, ActivityQueues: map[string]string{"Getenv": "traced"}})
	mod := h.deploy(t, "host/testdata/guests/netuse")
	handler, err := server.New(h.Host, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	apiServer := httptest.NewServer(handler)
	defer apiServer.Close()
	workerExp, err := serving.TraceExporter(ctx, col.URL)
	if err != nil {
		t.Fatal(err)
	}
	wtp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(workerExp))
	workerCtx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() {
		workerDone <- worker.New(client.New(apiServer.URL, nil)).OnQueue("traced").WithTracerProvider(wtp).
			Register("Getenv", func(context.Context, string) (string, error) { return "from the worker", nil }).Run(workerCtx)
	}()

	const id = "traced-1"
	h.startAt(t, "Traced", fmt.Sprintf("%q", site.URL), id)
	if inst := h.wait(t, id); inst.Status != engine.StatusCompleted || string(inst.Result) != `"from the worker / 200  page"` {
		t.Fatalf("%s is %s with %s, %+v", id, inst.Status, inst.Result, inst.Failure)
	}
	if _, err := h.Query(ctx, id, "nope", nil); !errors.Is(err, api.ErrUnknownQuery) {
		t.Fatalf("query nope: %v; want ErrUnknownQuery", err)
	}
	stopWorker()
	if err := <-workerDone; err != nil {
		t.Fatal(err)
	}
	if err := wtp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	h.stop() // Close exports the spans left

	sum := sha256.Sum256([]byte(id))
	traceID, rootID := sum[:16], sum[16:24]
	spans := col.received()
	byName := map[string][]span{}
	for _, s := range spans {
		if !bytes.Equal(s.TraceId, traceID) {
			t.Errorf("span %q is in trace %x; want the instance's, %x", s.Name, s.TraceId, traceID)
		}
		byName[s.Name] = append(byName[s.Name], s)
	}
	// one returns the span name of the host (service durabox), or of
	// the worker.
	one := func(name string, ofHost bool) span {
		t.Helper()
		for _, s := range byName[name] {
			if (s.service == "durabox") == ofHost {
				return s
			}
		}
		t.Fatalf("no span %q of the host (%v) among %d: %v", name, ofHost, len(spans), names(spans))
		return span{}
	}
	wantAttrs := func(s span, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if got := attr(s.Attributes, k); got != v {
				t.Errorf("span %q: %s is %q; want %q", s.Name, k, got, v)
			}
		}
	}
	ofInstance := map[string]string{"durabox.instance.id": id, "durabox.execution": "1", "durabox.orchestration": "Traced", "durabox.module": mod.Hash}

	root := one("instance Traced", true)
	if len(root.ParentSpanId) != 0 || !bytes.Equal(root.SpanId, rootID) {
		t.Errorf("the instance's span has parent %x and id %x; want no parent and id %x", root.ParentSpanId, root.SpanId, rootID)
	}
	wantAttrs(root, map[string]string{"durabox.outcome": "Completed"})
	wantAttrs(root, ofInstance)

	turns := byName["turn Traced"]
	if len(turns) < 3 {
		t.Fatalf("%d turn spans; want 3 or more (start, Getenv done, Fetch done): %v", len(turns), names(spans))
	}
	outcomes := map[string]int{}
	for _, turn := range turns {
		outcomes[attr(turn.Attributes, "durabox.outcome")]++
		wantAttrs(turn, ofInstance)
	}
	if outcomes["Completed"] != 1 || outcomes["Running"] != len(turns)-1 {
		t.Errorf("turn outcomes %v; want one Completed, the others Running", outcomes)
	}

	fetch := one("activity Fetch", true)
	wantAttrs(fetch, map[string]string{"durabox.instance.id": id, "durabox.activity.name": "Fetch", "durabox.activity.attempt": "1", "durabox.outcome": "completed", "durabox.module": mod.Hash})
	hostGetenv := one("activity Getenv", true)
	wantAttrs(hostGetenv, map[string]string{"durabox.instance.id": id, "durabox.activity.name": "Getenv", "durabox.activity.attempt": "1",
		"durabox.activity.queue": "traced", "durabox.outcome": "completed"})
	workerGetenv := one("activity Getenv", false)
	wantAttrs(workerGetenv, map[string]string{"durabox.instance.id": id, "durabox.activity.name": "Getenv", "durabox.activity.attempt": "1",
		"durabox.activity.queue": "traced", "durabox.outcome": "completed"})
	query := one("query nope", true)
	wantAttrs(query, map[string]string{"durabox.instance.id": id, "durabox.query.name": "nope", "durabox.outcome": "unknown"})
	if query.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the query's span has status %v; want an error", query.Status)
	}

	for _, s := range append([]span{fetch, hostGetenv, query}, turns...) {
		if !bytes.Equal(s.ParentSpanId, rootID) {
			t.Errorf("span %q has parent %x; want the instance's span, %x", s.Name, s.ParentSpanId, rootID)
		}
	}
	if !bytes.Equal(workerGetenv.ParentSpanId, hostGetenv.SpanId) {
		t.Errorf("the worker's span has parent %x; want the host's span of its attempt, %x", workerGetenv.ParentSpanId, hostGetenv.SpanId)
	}
	if workerGetenv.Kind != tracepb.Span_SPAN_KIND_CONSUMER {
		t.Errorf("the worker's span is of kind %v; want consumer", workerGetenv.Kind)
	}
	want := "00-" + hex.EncodeToString(traceID) + "-" + hex.EncodeToString(fetch.SpanId) + "-01"
	mu.Lock()
	defer mu.Unlock()
	if len(traceparent) != 1 || traceparent[0] != want {
		t.Errorf("the activity's HTTP request carried traceparent %q; want %q, the host's span of the attempt", traceparent, want)
	}
}

// names lists the names of spans, for a failure's message.
func names(spans []span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+"("+s.service+")")
	}
	return out
}

// TestNoTraceparentWithoutTracing: a host that does not trace gives
// workers' tasks no traceparent, and its activities' HTTP requests none.
func TestNoTraceparentWithoutTracing(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		fmt.Fprint(w, "page")
	}))
	defer site.Close()
	siteURL, _ := url.Parse(site.URL)
	h := startHost(t, host.Options{HTTPAllowList: []string{siteURL.Host}, ActivityQueues: map[string]string{"Getenv": "untraced"}})
	h.deploy(t, "host/testdata/guests/netuse")
	const id = "untraced-1"
	h.startAt(t, "Traced", fmt.Sprintf("%q", site.URL), id)
	task := h.pollOne(t, "untraced", time.Minute)
	if task.Traceparent != "" {
		t.Errorf("the task carries traceparent %q; want none", task.Traceparent)
	}
	if err := h.CompleteTask(context.Background(), task.Token, json.RawMessage(`"hi"`)); err != nil {
		t.Fatal(err)
	}
	h.wait(t, id)
	if tp := <-got; tp != "" {
		t.Errorf("the activity's HTTP request carried traceparent %q; want none", tp)
	}
}
