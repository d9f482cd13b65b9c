package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/client/fakehost"
)

// orchestrations are the fake host's: Greeting completes, Fails fails, Slow
// runs until the wait ends, Stuck makes Wait itself fail when it ends.
var orchestrations = map[string]fakehost.Orchestration{
	"Greeting": fakehost.Greeting,
	"Fails": func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("boom")
	},
	"Slow": func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, fakehost.ErrStillRunning
	},
	"Stuck": func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	},
}

// hash is the sha256 of the fixture's module, "\x00asm fake".
const hash = "5c471d4fcbf930ec41c5276151aa1d4572fe3176288e2a0a117f9b677c4e1bc5"

// fixture returns a fake host with one module deployed (at 03:04:06), the
// instance "done" (Greeting("world"), completed at 03:04:08) and the
// instance "pending" (Greeting("you"), started at 03:04:09).
func fixture(t *testing.T) *fakehost.Host {
	t.Helper()
	ctx := context.Background()
	h := fakehost.New(orchestrations)
	if _, err := h.Deploy(ctx, []byte("\x00asm fake"), nil); err != nil {
		t.Fatal(err)
	}
	start(t, h, "Greeting", `"world"`, "done")
	if _, err := h.Wait(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	start(t, h, "Greeting", `"you"`, "pending")
	return h
}

func start(t *testing.T, h *fakehost.Host, name, input, id string) {
	t.Helper()
	if _, err := h.Start(context.Background(), name, json.RawMessage(input), id); err != nil {
		t.Fatal(err)
	}
}

const (
	moduleJSON  = `{"hash":"` + hash + `","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"deployedAt":"2025-01-02T03:04:06Z"}`
	doneJSON    = `{"id":"done","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Completed","input":"world","result":"Hello, world!","createdAt":"2025-01-02T03:04:07Z","updatedAt":"2025-01-02T03:04:08Z"}`
	pendingJSON = `{"id":"pending","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Pending","input":"you","createdAt":"2025-01-02T03:04:09Z","updatedAt":"2025-01-02T03:04:09Z"}`
)

func TestHandler(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, h *fakehost.Host)
		method string
		path   string
		body   string
		// wantElapsed is how long the request takes, in the fake time of a
		// synctest bubble.
		wantElapsed time.Duration
		wantStatus  int
		wantBody    string
		// check, if set, looks at the fake host afterwards.
		check func(t *testing.T, h *fakehost.Host)
		// wantLog is what the handler logs.
		wantLog string
	}{
		{
			name: "deploy", method: "POST", path: "/v1/modules", body: "x",
			wantStatus: 201,
			wantBody:   `{"hash":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"deployedAt":"2025-01-02T03:04:10Z"}`,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.Deployed(); len(got) != 2 || string(got[1]) != "x" {
					t.Errorf("deployed %q, want the fixture's module and %q", got, "x")
				}
			},
		},
		{
			name:   "deploy refused",
			setup:  failing("Deploy", fmt.Errorf("%w: the file is not a WebAssembly module", host.ErrBadModule)),
			method: "POST", path: "/v1/modules", body: "x",
			wantStatus: 422, wantBody: `{"error":"module refused: the file is not a WebAssembly module"}`,
		},
		{
			name:   "deploy too large",
			method: "POST", path: "/v1/modules", body: strings.Repeat("x", 64<<20+1),
			wantStatus: 413, wantBody: `{"error":"request too large: the module is larger than the limit of 64 MiB"}`,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := len(h.Deployed()); got != 1 {
					t.Errorf("%d modules deployed, want only the fixture's", got)
				}
			},
		},
		{
			name:   "modules",
			method: "GET", path: "/v1/modules",
			wantStatus: 200, wantBody: `{"modules":[` + moduleJSON + `]}`,
		},
		{
			name:   "modules fails",
			setup:  failing("Modules", errors.New("host: list modules: disk on fire")),
			method: "GET", path: "/v1/modules",
			wantStatus: 500, wantBody: `{"error":"list modules: disk on fire"}`,
			wantLog: `level=ERROR msg="request failed" method=GET path=/v1/modules err="host: list modules: disk on fire"` + "\n",
		},
		{
			name:   "start",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "input": {"who": ["world"]}}`,
			wantStatus: 201, wantBody: `{"id":"inst3"}`,
			check: wantInput("inst3", `{"who": ["world"]}`),
		},
		{
			name:   "start with an id",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "input": "x", "id": "mine"}`,
			wantStatus: 201, wantBody: `{"id":"mine"}`,
			check: wantInput("mine", `"x"`),
		},
		{
			name:   "start without input",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting"}`,
			wantStatus: 201, wantBody: `{"id":"inst3"}`,
			check: wantInput("inst3", `null`),
		},
		{
			name:   "start with an empty body",
			method: "POST", path: "/v1/instances", body: " \n",
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is empty; send a JSON object such as {\"name\": \"Greeting\", \"input\": \"world\"}"}`,
		},
		{
			name:   "start with a body that is not JSON",
			method: "POST", path: "/v1/instances", body: `name=Greeting`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is not a JSON object such as {\"name\": \"Greeting\", \"input\": \"world\"}: invalid character 'a' in literal null (expecting 'u')"}`,
		},
		{
			name:   "start with an unknown field",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "inputs": 1}`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is not a JSON object such as {\"name\": \"Greeting\", \"input\": \"world\"}: json: unknown field \"inputs\""}`,
		},
		{
			name:   "start with more after the object",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting"} {}`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request body goes on after its JSON object"}`,
		},
		{
			name:   "start without a name",
			method: "POST", path: "/v1/instances", body: `{"input": "world"}`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request has no \"name\": say which orchestration to start"}`,
		},
		{
			name:   "start an unknown orchestration",
			method: "POST", path: "/v1/instances", body: `{"name": "Nope"}`,
			wantStatus: 422, wantBody: `{"error":"unknown orchestration \"Nope\": no deployed module registers it"}`,
		},
		{
			name:   "start with a taken id",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "id": "done"}`,
			wantStatus: 409, wantBody: `{"error":"instance already exists: \"done\""}`,
		},
		{
			name:   "start with a bad id",
			setup:  failing("Start", fmt.Errorf("%w: instance id %q must be 1 to 128 letters", host.ErrBadInput, "a b")),
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "id": "a b"}`,
			wantStatus: 400, wantBody: `{"error":"bad input: instance id \"a b\" must be 1 to 128 letters"}`,
		},
		{
			name:   "start fails",
			setup:  failing("Start", errors.New(`host: start "Greeting": disk full`)),
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting"}`,
			wantStatus: 500, wantBody: `{"error":"start \"Greeting\": disk full"}`,
			wantLog: `level=ERROR msg="request failed" method=POST path=/v1/instances err="host: start \"Greeting\": disk full"` + "\n",
		},
		{
			name:   "start on a module",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "id": "on", "module": "5c471d"}`,
			wantStatus: 201, wantBody: `{"id":"on"}`,
		},
		{
			name:   "start on an unknown module",
			method: "POST", path: "/v1/instances", body: `{"name": "Greeting", "module": "77"}`,
			wantStatus: 404, wantBody: `{"error":"unknown module: no deployed module's hash starts with \"77\""}`,
		},
		{
			name:   "upgrade without from",
			method: "POST", path: "/v1/upgrades", body: `{"to": "2b1f"}`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request has no \"from\": name the module to upgrade from, or an orchestration"}`,
		},
		{
			name:   "upgrade with an unknown field",
			method: "POST", path: "/v1/upgrades", body: `{"from": "9f72", "dry-run": true}`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is not a JSON object such as {\"from\": \"9f72cbb040f5\", \"to\": \"2b1f08c3aa10\", \"dryRun\": true}: json: unknown field \"dry-run\""}`,
		},
		{
			name:   "replay of a bad execution",
			method: "GET", path: "/v1/instances/done/replay?execution=0",
			wantStatus: 400, wantBody: `{"error":"bad input: execution=\"0\" is not an execution number (1, 2, …)"}`,
		},
		{
			name:   "reset without a body",
			method: "POST", path: "/v1/instances/done/reset",
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is empty; send a JSON object such as {\"toEvent\": 7, \"module\": \"2b1f08c3aa10\", \"dryRun\": true}"}`,
		},
		{
			name:   "export, which the fake cannot",
			method: "GET", path: "/v1/instances/done/bundle",
			wantStatus: 500, wantBody: `{"error":"fakehost: replay, upgrade, export and reset need a real host: the fake runs no wasm"}`,
			wantLog: `level=ERROR msg="request failed" method=GET path=/v1/instances/done/bundle err="fakehost: replay, upgrade, export and reset need a real host: the fake runs no wasm"` + "\n",
		},
		{
			name:   "list",
			method: "GET", path: "/v1/instances",
			wantStatus: 200, wantBody: `{"instances":[` + pendingJSON + `,` + doneJSON + `]}`,
		},
		{
			name:   "instance",
			method: "GET", path: "/v1/instances/done",
			wantStatus: 200, wantBody: doneJSON,
		},
		{
			name:   "instance without wait stays as it is",
			method: "GET", path: "/v1/instances/pending",
			wantStatus: 200, wantBody: pendingJSON,
		},
		{
			name:   "instance not found",
			method: "GET", path: "/v1/instances/nope",
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
		{
			name:   "wait until done",
			method: "GET", path: "/v1/instances/pending?wait=30s",
			wantStatus: 200,
			wantBody:   `{"id":"pending","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Completed","input":"you","result":"Hello, you!","createdAt":"2025-01-02T03:04:09Z","updatedAt":"2025-01-02T03:04:10Z"}`,
		},
		{
			name:   "wait for a failure",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Fails", `null`, "f") },
			method: "GET", path: "/v1/instances/f?wait=1s",
			wantStatus: 200,
			wantBody:   `{"id":"f","name":"Fails","moduleHash":"` + hash + `","executionId":1,"status":"Failed","input":null,"failure":{"message":"boom"},"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:11Z"}`,
		},
		{
			name:   "wait runs out",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Slow", `1`, "slow") },
			method: "GET", path: "/v1/instances/slow?wait=1.5s",
			wantElapsed: 1500 * time.Millisecond,
			wantStatus:  200,
			wantBody:    `{"id":"slow","name":"Slow","moduleHash":"` + hash + `","executionId":1,"status":"Running","input":1,"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:11Z"}`,
		},
		{
			name:   "wait is capped at a minute",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Slow", `1`, "slow") },
			method: "GET", path: "/v1/instances/slow?wait=1h",
			wantElapsed: time.Minute,
			wantStatus:  200,
			wantBody:    `{"id":"slow","name":"Slow","moduleHash":"` + hash + `","executionId":1,"status":"Running","input":1,"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:11Z"}`,
		},
		{
			name:   "wait that runs out while reading answers with a fresh read",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Stuck", `1`, "stuck") },
			method: "GET", path: "/v1/instances/stuck?wait=2s",
			wantElapsed: 2 * time.Second,
			wantStatus:  200,
			wantBody:    `{"id":"stuck","name":"Stuck","moduleHash":"` + hash + `","executionId":1,"status":"Pending","input":1,"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:10Z"}`,
		},
		{
			name:   "wait of zero does not wait",
			method: "GET", path: "/v1/instances/pending?wait=0s",
			wantStatus: 200, wantBody: pendingJSON,
		},
		{
			name:   "wait for an instance not found",
			method: "GET", path: "/v1/instances/nope?wait=30s",
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
		{
			name:   "wait that is not a duration",
			method: "GET", path: "/v1/instances/pending?wait=soon",
			wantStatus: 400, wantBody: `{"error":"bad input: wait=\"soon\" is not a duration such as 30s"}`,
		},
		{
			name:   "wait that is negative",
			method: "GET", path: "/v1/instances/pending?wait=-1s",
			wantStatus: 400, wantBody: `{"error":"bad input: wait=\"-1s\" is not a duration such as 30s"}`,
		},
		{
			name:   "history",
			method: "GET", path: "/v1/instances/done/history",
			wantStatus: 200,
			wantBody:   `{"events":[{"id":1,"kind":"OrchestrationStarted","time":"2025-01-02T03:04:07Z","name":"Greeting","instanceId":"done","input":"world"},{"id":2,"kind":"OrchestrationCompleted","time":"2025-01-02T03:04:08Z","result":"Hello, world!"}]}`,
		},
		{
			name:   "history of a bad execution",
			method: "GET", path: "/v1/instances/done/history?execution=0",
			wantStatus: 400, wantBody: `{"error":"bad input: execution=\"0\" is not an execution number (1, 2, …)"}`,
		},
		{
			name:   "history of a later execution",
			method: "GET", path: "/v1/instances/done/history?execution=2",
			wantStatus: 200, wantBody: `{"events":[]}`,
		},
		{
			name:   "history not found",
			method: "GET", path: "/v1/instances/nope/history",
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
		{
			name:   "purge",
			method: "DELETE", path: "/v1/instances/done",
			wantStatus: 200, wantBody: `{"id":"done"}`,
			check: func(t *testing.T, h *fakehost.Host) {
				if inst, err := h.Instance(context.Background(), "done"); !errors.Is(err, host.ErrNotFound) {
					t.Errorf("after the purge: %+v, %v; want it not found", inst, err)
				}
			},
		},
		{
			name:   "purge what has not finished",
			method: "DELETE", path: "/v1/instances/pending",
			wantStatus: 409, wantBody: `{"error":"instance not finished: \"pending\" has not ended; cancel it or wait for it to end, then purge it"}`,
			check: wantInput("pending", `"you"`),
		},
		{
			name:   "purge not found",
			method: "DELETE", path: "/v1/instances/nope",
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
		{
			name:   "raise",
			method: "POST", path: "/v1/instances/done/events", body: `{"name": "Approve", "data": true, "persistent": true}`,
			wantStatus: 202, wantBody: `{"name":"Approve","data":true,"persistent":true}`,
		},
		{
			name:   "raise without a body",
			method: "POST", path: "/v1/instances/done/events",
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is empty; send a JSON object such as {\"name\": \"Approval\", \"data\": true}"}`,
		},
		{
			name:   "raise for an unknown instance",
			method: "POST", path: "/v1/instances/nope/events", body: `{"name": "Approve"}`,
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := fixture(t)
				if tt.setup != nil {
					tt.setup(t, h)
				}
				var log bytes.Buffer
				handler := host.NewHandler(h, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: withoutTime})))
				rec := httptest.NewRecorder()
				began := time.Now()
				handler.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
				if elapsed := time.Since(began); elapsed != tt.wantElapsed {
					t.Errorf("took %s, want %s", elapsed, tt.wantElapsed)
				}
				if rec.Code != tt.wantStatus {
					t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
				}
				if got := rec.Header().Get("Content-Type"); got != "application/json" {
					t.Errorf("Content-Type %q, want application/json", got)
				}
				if got := rec.Body.String(); got != tt.wantBody+"\n" {
					t.Errorf("body\n%s\nwant\n%s", got, tt.wantBody)
				}
				if got := log.String(); got != tt.wantLog {
					t.Errorf("log %q, want %q", got, tt.wantLog)
				}
				if tt.check != nil {
					tt.check(t, h)
				}
			})
		})
	}
}

func failing(method string, err error) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) { h.Fail(method, err) }
}

// wantInput checks that instance id was started with input.
func wantInput(id, input string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		inst, err := h.Instance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if string(inst.Input) != input {
			t.Errorf("instance %s has input %s, want %s", id, inst.Input, input)
		}
	}
}

func withoutTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func TestHandlerWithNothingDeployed(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/v1/modules", `{"modules":[]}`},
		{"/v1/instances", `{"instances":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			host.NewHandler(fakehost.New(orchestrations), nil).ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
			if rec.Code != http.StatusOK || rec.Body.String() != tt.want+"\n" {
				t.Errorf("got %d %s, want 200 %s", rec.Code, rec.Body, tt.want)
			}
		})
	}
}

func TestHandlerWithoutLogger(t *testing.T) {
	h := fixture(t)
	h.Fail("List", errors.New("host: list: broken"))
	rec := httptest.NewRecorder()
	host.NewHandler(h, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/instances", nil))
	if rec.Code != http.StatusInternalServerError || rec.Body.String() != `{"error":"list: broken"}`+"\n" {
		t.Errorf("got %d %s, want 500 with the error", rec.Code, rec.Body)
	}
}
