package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/host/server"
)

// scrape gets GET /metrics from handler and parses it.
func scrape(t *testing.T, handler http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/metrics", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return families
}

// value returns the value of the metric called name with labels (name,
// value, …): a counter's or a gauge's, or a histogram's count.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	family, ok := families[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range family.Metric {
		if len(m.Label) != len(labels)/2 {
			continue
		}
		for i, l := range m.Label {
			if l.GetName() != labels[2*i] || l.GetValue() != labels[2*i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// TestMetrics runs real instances and reads what GET /metrics counts:
// three Greetings (two turns and an activity each), a Retry that gives up
// after two failed attempts, and an Approval that waits on a timer until
// it is cancelled.
func TestMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := startHost(t, host.Options{Metrics: metrics.New()})
	h.deploy(t, "examples/wasm/hello")
	h.deploy(t, "examples/wasm/retry")
	h.deploy(t, "examples/wasm/approval")
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if inst := h.run(t, "Greeting", `"world"`); inst.Status != engine.StatusCompleted {
			t.Fatalf("Greeting: %s", inst.Status)
		}
	}
	if inst := h.run(t, "Retry", `{"attempts": 2, "failures": 5, "delay": "10ms"}`); inst.Status != engine.StatusFailed {
		t.Fatalf("Retry: %s", inst.Status)
	}
	approval := h.start(t, "Approval", `{"item": "laptop", "timeout": "1h"}`)
	waitForCustomStatus(t, h, approval)

	// The Approval goes into the live cache just after its turn commits.
	m := scrape(t, handler)
	for deadline := time.Now().Add(30 * time.Second); value(t, m, "durabox_live_instances") == 0 && time.Now().Before(deadline); m = scrape(t, handler) {
		time.Sleep(time.Millisecond)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"durabox_instances_started_total", []string{"orchestration", "Greeting"}, 3},
		{"durabox_instances_started_total", []string{"orchestration", "Retry"}, 1},
		{"durabox_instances_finished_total", []string{"orchestration", "Greeting", "status", "Completed"}, 3},
		{"durabox_instances_finished_total", []string{"orchestration", "Retry", "status", "Failed"}, 1},
		{"durabox_turns_total", []string{"orchestration", "Greeting"}, 6},
		{"durabox_turn_duration_seconds", []string{"orchestration", "Greeting"}, 6},
		{"durabox_activities_total", []string{"activity", "SayHello", "outcome", "completed"}, 3},
		{"durabox_activities_total", []string{"activity", "FlakyTask", "outcome", "failed"}, 2},
		{"durabox_activity_duration_seconds", []string{"activity", "SayHello"}, 3},
		{"durabox_queue_timers", nil, 1},
		{"durabox_live_instances", nil, 1},
		// Every turn of an instance with history found it live.
		{"durabox_live_cache_misses_total", nil, 0},
	} {
		if got := value(t, m, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"durabox_live_cache_hits_total", nil},
		{"durabox_live_memory_bytes", nil},
		{"durabox_live_memory_limit_bytes", nil},
		{"durabox_store_commit_duration_seconds", nil},
		{"durabox_store_commit_writes", nil},
		{"durabox_sandbox_instances_started_total", []string{"kind", "orchestration"}},
		{"durabox_sandbox_instances_started_total", []string{"kind", "activity"}},
		{"go_goroutines", nil},
	} {
		if got := value(t, m, c.name, c.labels...); got <= 0 {
			t.Errorf("%s%v = %v, want more than 0", c.name, c.labels, got)
		}
	}
	// The Approval's turns, its start and Notify's run are in the
	// counts too: a Greeting takes 2 turns, the Approval 2 so far.
	if hits, turns := value(t, m, "durabox_live_cache_hits_total"), value(t, m, "durabox_turns_total", "orchestration", "Greeting"); hits < turns/2 {
		t.Errorf("%v cache hits for %v Greeting turns", hits, turns)
	}

	if err := h.Cancel(ctx, approval, "no longer needed"); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, approval); inst.Status != engine.StatusCanceled {
		t.Fatalf("Approval: %s", inst.Status)
	}
	m = scrape(t, handler)
	if got := value(t, m, "durabox_instances_finished_total", "orchestration", "Approval", "status", "Canceled"); got != 1 {
		t.Errorf("Approval canceled: %v, want 1", got)
	}
	if got := value(t, m, "durabox_live_instances"); got != 0 {
		t.Errorf("live instances once every one has finished: %v, want 0", got)
	}
}

// waitForCustomStatus waits for an Approval to wait for its decision.
func waitForCustomStatus(t *testing.T, h *testHost, id string) {
	t.Helper()
	waitUntil(t, id+" sets its custom status", func(ctx context.Context) (bool, error) {
		inst, err := h.Instance(ctx, id)
		return inst.CustomStatus != "", err
	})
}

// waitUntil asks done every 10ms, for a minute at most, until it reports
// that what it waits for has happened.
func waitUntil(t *testing.T, what string, done func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		ok, err := done(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waited a minute until %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestReady: a host is ready once it runs, and not once its store is
// closed; GET /readyz says so, with the reason.
func TestReady(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	readyz := func() (int, string) {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	deadline := time.Now().Add(time.Minute)
	for code, body := readyz(); code != 200; code, body = readyz() {
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz: %d %s a minute after Run began", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := h.st.Close(); err != nil {
		t.Fatal(err)
	}
	code, body := readyz()
	var refusal struct{ Error string }
	json.Unmarshal([]byte(body), &refusal)
	if code != 503 || refusal.Error != "not ready: the store does not answer: sqlite: the store is closed" {
		t.Errorf("GET /readyz with the store closed: %d %s", code, body)
	}
}
