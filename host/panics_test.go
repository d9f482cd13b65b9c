package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/logbuf"
)

// panicking is a host on which a test injects a panic, served over HTTP
// too.
type panicking struct {
	*testHost
	url string
	log *logbuf.Buffer
	// clock is how far the host's clock is ahead of the real one.
	clock *atomic.Int64
}

// victimFailed checks that the instance "victim" failed because the host
// panicked at point, and that its history has the panic, with the stack
// that raised it, in its first event of kind.
func (p *panicking) victimFailed(t *testing.T, point string, kind engine.EventKind) {
	t.Helper()
	inst := p.wait(t, "victim")
	want := "panic: injected at " + point + " for victim"
	if inst.Status != engine.StatusFailed || inst.Failure == nil || !strings.Contains(inst.Failure.Message, want) {
		t.Fatalf("victim is %s, %+v; want it Failed with %q", inst.Status, inst.Failure, want)
	}
	history := p.history(t, "victim")
	i := slices.IndexFunc(history, func(e engine.Event) bool { return e.Kind == kind })
	if i < 0 {
		t.Fatalf("history %v, without %s", shape(history), kind)
	}
	if f := history[i].Failure; f == nil || !strings.Contains(f.Message, "the host panicked") || !strings.Contains(f.Details, "guard.MayPanic(") {
		t.Fatalf("%s: %+v; want the host's panic, with the stack that raised it in the details", kind, f)
	}
}

// completed checks that instance id completed.
func (p *panicking) completed(t *testing.T, id string) {
	t.Helper()
	if inst := p.wait(t, id); inst.Status != engine.StatusCompleted {
		t.Fatalf("%s is %s, %+v; want it Completed", id, inst.Status, inst.Failure)
	}
}

func (p *panicking) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(p.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// servesOn checks that the host serves on after its panic at boundary: a
// new instance completes, the health checks and the metrics answer, the
// metrics counted the panic once, and the log has it with its stack.
func (p *panicking) servesOn(t *testing.T, boundary string) {
	t.Helper()
	if _, err := p.Start(context.Background(), "Greeting", json.RawMessage(`"bystander"`), "bystander"); err != nil {
		t.Fatal(err)
	}
	p.completed(t, "bystander")
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := p.get(t, path); status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, status, body)
		}
	}
	status, metrics := p.get(t, "/metrics")
	want := fmt.Sprintf("durabox_panics_total{boundary=%q} 1\n", boundary)
	if status != http.StatusOK || !strings.Contains(metrics, want) {
		t.Errorf("GET /metrics: %d, without %q:\n%s", status, want, grep(metrics, "durabox_panics_total"))
	}
	log := p.log.String()
	if !strings.Contains(log, "level=ERROR msg=\"panic recovered; the host goes on\" boundary="+boundary) || !strings.Contains(log, "guard.MayPanic(") {
		t.Errorf("the log has no panic at %s with its stack:\n%s", boundary, log)
	}
}

// grep returns the lines of text that hold s.
func grep(text, s string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestPanicAtEachBoundary: a panic of the host's own code at each of its
// boundaries (a turn, before and after its commit; an activity attempt and
// the recording of its result; the timer that extends an attempt's lease;
// a fetcher; a module's load; a retention sweep; one instance of an
// upgrade; an HTTP request; the metrics read when gathered) ends what was
// served there, with the panic and its stack in its history where it had
// one, and nothing else: the host serves on, and counts the panic.
//
// Not parallel: it sets host/internal/guard's panic injection, which holds
// for the whole process.
func TestPanicAtEachBoundary(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, boundary string
		opts           host.Options
		// point is where a panic is injected for the instance "victim" of
		// orchestration (on guest, beside hello), which fails with the
		// panic in its first event of kind failed, or, when failed is
		// empty, completes anyway.
		point, guest, orchestration string
		failed                      engine.EventKind
		// serve, when set, is the test instead: it injects a panic,
		// makes the host serve what panics, and checks what became of
		// it.
		serve func(t *testing.T, p *panicking)
		// fetching runs the host on a store without handoffs, so that it
		// fetches the work its commits make (startHostFetching).
		fetching bool
	}{
		{name: "a turn", boundary: "turn", point: "turn", failed: engine.OrchestrationFailed},
		{name: "a turn, after its commit", boundary: "turn", point: "turn committed"},
		{name: "an activity attempt", boundary: "activity", point: "activity", failed: engine.ActivityFailed},
		{name: "the recording of an activity's result", boundary: "activity", point: "activity recorded"},
		{name: "the timer that extends an activity's lease", boundary: "lease", opts: host.Options{Lease: 600 * time.Millisecond},
			point: "lease", guest: "host/testdata/guests/spin", orchestration: "Wait", failed: engine.ActivityFailed},
		{name: "a fetcher", boundary: "fetch", fetching: true, serve: func(t *testing.T, p *panicking) {
			host.InjectPanic(t, "fetch", "activity")
			p.deploy(t, "examples/wasm/hello")
			p.startAs(t, "Greeting", "victim")
			p.completed(t, "victim")
		}},
		{name: "a module's load", boundary: "module", serve: func(t *testing.T, p *panicking) {
			// Another host deploys the module, so this one loads it from
			// the store at the instance's first turn.
			other, err := host.New(p.st, host.Options{CacheDir: host.TestCacheDir})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			wasm, err := guestbuild.Wasm("examples/wasm/hello")
			if err != nil {
				t.Fatal(err)
			}
			info, err := other.Deploy(ctx, wasm)
			if err != nil {
				t.Fatal(err)
			}
			host.InjectPanic(t, "module", info.Hash)
			p.startAs(t, "Greeting", "victim")
			if inst := p.wait(t, "victim"); inst.Failure == nil || !strings.Contains(inst.Failure.Message, "panic: injected at module") {
				t.Fatalf("victim is %s, %+v; want it Failed with the panic", inst.Status, inst.Failure)
			}
		}},
		{name: "a retention sweep", boundary: "sweep", opts: host.Options{Retention: time.Hour, SweepInterval: 20 * time.Millisecond}, serve: func(t *testing.T, p *panicking) {
			host.InjectPanic(t, "sweep", "")
			p.deploy(t, "examples/wasm/hello")
			p.startAs(t, "Greeting", "victim")
			p.completed(t, "victim")
			// The sweeps go on: two hours later, the victim is purged.
			p.clock.Store(int64(2 * time.Hour))
			deadline := time.Now().Add(time.Minute)
			for _, err := p.Instance(ctx, "victim"); err == nil; _, err = p.Instance(ctx, "victim") {
				if time.Now().After(deadline) {
					t.Fatal("the sweeps stopped: the victim was not purged two hours after it finished")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}},
		{name: "an instance of an upgrade", boundary: "upgrade", serve: func(t *testing.T, p *panicking) {
			host.InjectPanic(t, "upgrade", "victim")
			p.deploy(t, "examples/wasm/hello")
			v1 := p.deploy(t, versionsPkg)
			for _, id := range []string{"victim", "other"} {
				p.startFlow(t, id, `"x"`)
				p.atFirst(t, id)
			}
			v2 := p.deploy(t, versionsPkg, "main.version=v2")
			report, err := p.Upgrade(ctx, api.UpgradeRequest{From: v1.Hash, To: v2.Hash, DryRun: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := (api.UpgradeSummary{Compatible: 1, Fails: 1}); report.Summary != want {
				t.Fatalf("summary %+v, want %+v: %+v", report.Summary, want, report.Results)
			}
			for _, r := range report.Results {
				if r.InstanceID == "victim" && (r.Outcome != api.UpgradeFails || !strings.Contains(r.Reason, "panic: injected at upgrade for victim")) {
					t.Fatalf("victim: %+v; want it to fail with the panic", r)
				}
			}
		}},
		{name: "an HTTP request", boundary: "http", serve: func(t *testing.T, p *panicking) {
			host.InjectPanic(t, "http", "/v1/instances/victim")
			p.deploy(t, "examples/wasm/hello")
			status, body := p.get(t, "/v1/instances/victim")
			var answer api.ErrorResponse
			if status != http.StatusInternalServerError || json.Unmarshal([]byte(body), &answer) != nil || !strings.Contains(answer.Error, "panicked") {
				t.Fatalf("GET /v1/instances/victim: %d %s; want 500 saying the host panicked", status, body)
			}
		}},
		{name: "the metrics read when gathered", boundary: "metrics", serve: func(t *testing.T, p *panicking) {
			host.InjectPanic(t, "metrics", "")
			p.deploy(t, "examples/wasm/hello")
			if status, body := p.get(t, "/metrics"); status != http.StatusOK || !strings.Contains(body, "durabox_live_cache_hits_total") {
				t.Fatalf("GET /metrics: %d; want 200 with the metrics the panic did not reach:\n%s", status, body)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &logbuf.Buffer{}
			var ahead atomic.Int64
			tt.opts.Logger = slog.New(slog.NewTextHandler(log, nil))
			tt.opts.Clock = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
			start := startHost
			if tt.fetching {
				start = startHostFetching
			}
			h := start(t, tt.opts)
			handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics(), Logger: tt.opts.Logger})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(handler)
			t.Cleanup(srv.Close)
			p := &panicking{testHost: h, url: srv.URL, log: log, clock: &ahead}
			switch {
			case tt.serve != nil:
				tt.serve(t, p)
			default:
				host.InjectPanic(t, tt.point, "victim")
				p.deploy(t, "examples/wasm/hello")
				orchestration := "Greeting"
				if tt.guest != "" {
					p.deploy(t, tt.guest)
					orchestration = tt.orchestration
				}
				p.startAs(t, orchestration, "victim")
				if tt.failed != "" {
					p.victimFailed(t, tt.point, tt.failed)
				} else {
					p.completed(t, "victim")
				}
			}
			p.servesOn(t, tt.boundary)
		})
	}
}

// startAs starts orchestration name as instance id.
func (h *testHost) startAs(t *testing.T, name, id string) {
	t.Helper()
	if _, err := h.Start(context.Background(), name, json.RawMessage(`"x"`), id); err != nil {
		t.Fatal(err)
	}
}
