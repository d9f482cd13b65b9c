package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
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
	if _, err := h.Deploy(ctx, []byte("\x00asm fake")); err != nil {
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
	moduleJSON = `{"hash":"` + hash + `","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"deployedAt":"2025-01-02T03:04:06Z"}`
	// moduleCountsJSON is moduleJSON as GET /v1/modules shows it.
	moduleCountsJSON = `{"hash":"` + hash + `","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"deployedAt":"2025-01-02T03:04:06Z","instances":{"Completed":1,"Pending":1}}`
	doneSummary      = `{"id":"done","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Completed","createdAt":"2025-01-02T03:04:07Z","updatedAt":"2025-01-02T03:04:08Z"}`
	pendingSummary   = `{"id":"pending","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Pending","createdAt":"2025-01-02T03:04:09Z","updatedAt":"2025-01-02T03:04:09Z"}`
	doneJSON         = `{"id":"done","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Completed","input":"world","result":"Hello, world!","createdAt":"2025-01-02T03:04:07Z","updatedAt":"2025-01-02T03:04:08Z",` +
		`"executions":[{"id":1,"events":2,"startedAt":"2025-01-02T03:04:07Z","endedAt":"2025-01-02T03:04:08Z","end":"OrchestrationCompleted"}],"children":[]}`
	pendingJSON = `{"id":"pending","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Pending","input":"you","createdAt":"2025-01-02T03:04:09Z","updatedAt":"2025-01-02T03:04:09Z",` +
		`"executions":[{"id":1,"events":1,"startedAt":"2025-01-02T03:04:09Z"}],"children":[],"lastProgress":"2025-01-02T03:04:09Z"}`
)

// details is the answer of GET /v1/instances/{id} for an instance
// (its JSON without the closing brace) with one execution, and, for one
// that has not finished, the time it last made progress.
func details(instance, execution, lastProgress string) string {
	s := instance + `,"executions":[` + execution + `],"children":[]`
	if lastProgress != "" {
		s += `,"lastProgress":"` + lastProgress + `"`
	}
	return s + `}`
}

// multipart returns a multipart/form-data body of fields (name, value,
// name, value…), where a field "module" is a file, and its content type.
func multipartBody(fields ...string) (string, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i < len(fields); i += 2 {
		if fields[i] == "module" {
			w, _ := mw.CreateFormFile("module", "m.wasm")
			w.Write([]byte(fields[i+1]))
			continue
		}
		mw.WriteField(fields[i], fields[i+1])
	}
	mw.Close()
	return b.String(), mw.FormDataContentType()
}

// adminToken and readToken are the tokens of the tests that ask for them.
const (
	adminToken = "admin-0123456789abcdef"
	readToken  = "read-0123456789abcdef"
	// workerToken is the token of workers outside the host.
	workerToken = "work-0123456789abcdef"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(t *testing.T, h *fakehost.Host)
		method string
		path   string
		body   string
		// contentType is the body's; empty means application/json for a
		// POST, none for the others.
		contentType string
		// form, if set, makes the body multipart/form-data of these fields
		// (see multipartBody).
		form []string
		// wantElapsed is how long the request takes, in the fake time of a
		// synctest bubble.
		wantElapsed time.Duration
		wantStatus  int
		wantBody    string
		// check, if set, looks at the fake host afterwards.
		check func(t *testing.T, h *fakehost.Host)
		// wantLog is what the handler logs before its line about the
		// request (which it logs for every request that is not a GET).
		wantLog string
	}{
		{
			name: "deploy", method: "POST", path: "/v1/modules", body: "x", contentType: "application/wasm",
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
			setup:  failing("Deploy", fmt.Errorf("%w: the file is not a WebAssembly module", api.ErrBadModule)),
			method: "POST", path: "/v1/modules", body: "x", contentType: "application/wasm",
			wantStatus: 422, wantBody: `{"error":"module refused: the file is not a WebAssembly module"}`,
		},
		{
			name:   "deploy too large",
			method: "POST", path: "/v1/modules", body: strings.Repeat("x", 64<<20+1), contentType: "application/wasm",
			wantStatus: 413, wantBody: `{"error":"request too large: the module is larger than the limit of 64 MiB"}`,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := len(h.Deployed()); got != 1 {
					t.Errorf("%d modules deployed, want only the fixture's", got)
				}
			},
		},
		{
			name:   "deploy with an environment",
			method: "POST", path: "/v1/modules", form: []string{"module", "x", "env", "A=secret-a", "env", "B=secret-b"},
			wantStatus: 201,
			wantBody:   `{"hash":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"envKeys":["A","B"],"deployedAt":"2025-01-02T03:04:10Z"}`,
			check:      wantEnv("A=secret-a", "B=secret-b"),
		},
		{
			name: "deploy again keeps the environment",
			setup: func(t *testing.T, h *fakehost.Host) {
				h.DeployWithEnv(context.Background(), []byte("\x00asm fake"), []string{"KEPT=1"})
			},
			method: "POST", path: "/v1/modules", body: "\x00asm fake", contentType: "application/wasm",
			wantStatus: 201,
			wantBody:   `{"hash":"` + hash + `","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"envKeys":["KEPT"],"deployedAt":"2025-01-02T03:04:11Z"}`,
			check:      wantEnv("KEPT=1"),
		},
		{
			name: "deploy with the environment cleared",
			setup: func(t *testing.T, h *fakehost.Host) {
				h.DeployWithEnv(context.Background(), []byte("\x00asm fake"), []string{"GONE=1"})
			},
			method: "POST", path: "/v1/modules", form: []string{"module", "\x00asm fake", "envClear", "true"},
			wantStatus: 201,
			wantBody:   `{"hash":"` + hash + `","orchestrations":["Fails","Greeting","Slow","Stuck"],"activities":[],"deployedAt":"2025-01-02T03:04:11Z"}`,
			check:      wantEnv(),
		},
		{
			name:   "deploy with an environment and envClear",
			method: "POST", path: "/v1/modules", form: []string{"module", "x", "env", "A=1", "envClear", "true"},
			wantStatus: 400, wantBody: `{"error":"bad input: the body sets \"env\" and \"envClear\"; \"env\" replaces the whole environment already"}`,
		},
		{
			name:   "deploy without a module part",
			method: "POST", path: "/v1/modules", form: []string{"env", "A=1"},
			wantStatus: 400, wantBody: `{"error":"bad input: the body has no \"module\" part: the module's bytes"}`,
		},
		{
			name:   "deploy with the environment in the URL",
			method: "POST", path: "/v1/modules?env=API_TOKEN=s3cret", body: "x", contentType: "application/wasm",
			wantStatus: 400, wantBody: `{"error":"bad input: POST /v1/modules takes no query; environment values go in a multipart body (durabox deploy --env), never in the URL, where proxies and logs keep them"}`,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := len(h.Deployed()); got != 1 {
					t.Errorf("%d modules deployed, want only the fixture's", got)
				}
			},
		},
		{
			name:   "modules",
			method: "GET", path: "/v1/modules",
			wantStatus: 200, wantBody: `{"modules":[` + moduleCountsJSON + `]}`,
		},
		{
			name:   "remove a module in use",
			method: "DELETE", path: "/v1/modules/" + hash,
			wantStatus: 409, wantBody: `{"error":"module in use: instances run on it"}`,
		},
		{
			name:   "remove a module",
			setup:  func(t *testing.T, h *fakehost.Host) { h.Deploy(context.Background(), []byte("x")) },
			method: "DELETE", path: "/v1/modules/2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
			wantStatus: 200, wantBody: `{"hash":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}`,
		},
		{
			name:   "remove a module never deployed",
			method: "DELETE", path: "/v1/modules/abc",
			wantStatus: 404, wantBody: `{"error":"module not found: no deployed module's hash is or starts with \"abc\" (durabox deploy prints a module's hash)"}`,
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
			name:   "start with a name that is not UTF-8",
			method: "POST", path: "/v1/instances", body: "{\"name\": \"Gr\xffeting\"}",
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is not I-JSON (RFC 7493): invalid UTF-8 at byte 12"}`,
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
			setup:  failing("Start", fmt.Errorf("%w: instance id %q must be 1 to 128 letters", api.ErrBadInput, "a b")),
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
			wantStatus: 404, wantBody: `{"error":"module not found: no deployed module's hash starts with \"77\""}`,
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
			wantStatus: 200, wantBody: `{"instances":[` + pendingSummary + `,` + doneSummary + `]}`,
			check: wantQuery(store.InstanceQuery{}),
		},
		{
			name:   "list a page",
			method: "GET", path: "/v1/instances?limit=1",
			wantStatus: 200, wantBody: `{"instances":[` + pendingSummary + `],"next":"1"}`,
		},
		{
			name:   "list the next page",
			method: "GET", path: "/v1/instances?limit=1&cursor=1",
			wantStatus: 200, wantBody: `{"instances":[` + doneSummary + `]}`,
		},
		{
			name:   "list with every filter",
			method: "GET", path: "/v1/instances?status=Running,Failed&status=Terminated&name=Greeting&module=" + hash +
				"&idPrefix=ord&parent=p&createdAfter=2026-01-01T00:00:00Z&createdBefore=2026-02-01T00:00:00%2B01:00&finishedBefore=2026-03-01T00:00:00.5Z",
			wantStatus: 200, wantBody: `{"instances":[]}`,
			check: wantQuery(store.InstanceQuery{Filter: store.InstanceFilter{
				Statuses: []engine.Status{engine.StatusRunning, engine.StatusFailed, engine.StatusTerminated}, Name: "Greeting", ModuleHash: hash,
				IDPrefix: "ord", ParentID: "p", CreatedAfter: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
				CreatedBefore: time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC), FinishedBefore: time.Date(2026, 3, 1, 0, 0, 0, 5e8, time.UTC)}}),
		},
		{
			name:   "list with a status that is none",
			method: "GET", path: "/v1/instances?status=Done",
			wantStatus: 400, wantBody: `{"error":"bad input: \"Done\" is not a status; an instance is [Pending Running Completed Failed Canceled Terminated]"}`,
		},
		{
			name:   "list with a time that is not one",
			method: "GET", path: "/v1/instances?createdAfter=yesterday",
			wantStatus: 400, wantBody: `{"error":"bad input: createdAfter=\"yesterday\" is not a time such as 2026-01-02T15:04:05Z (RFC 3339)"}`,
		},
		{
			name:   "list with a parameter it does not take",
			method: "GET", path: "/v1/instances?state=Running",
			wantStatus: 400, wantBody: `{"error":"bad input: list takes no parameter \"state\"; it takes status, name, module, idPrefix, parent, createdAfter, createdBefore, finishedBefore, where, stalledFor, waitingOn, limit, cursor"}`,
		},
		{
			name:   "list with a bad limit",
			method: "GET", path: "/v1/instances?limit=0",
			wantStatus: 400, wantBody: `{"error":"bad input: limit=\"0\" is not a number from 1 to 1000"}`,
		},
		{
			name:   "purge the finished instances a filter selects",
			method: "DELETE", path: "/v1/instances?status=Completed&finishedBefore=2026-01-01T00:00:00Z",
			wantStatus: 200, wantBody: `{"purged":1}`,
			check: func(t *testing.T, h *fakehost.Host) {
				want := store.InstanceFilter{Statuses: []engine.Status{engine.StatusCompleted}, FinishedBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				if got := h.Filter(); !reflect.DeepEqual(got, want) {
					t.Errorf("filter %+v, want %+v", got, want)
				}
				wantInstances("pending")(t, h)
			},
		},
		{
			name:   "purge as a dry run",
			method: "DELETE", path: "/v1/instances?status=Completed&dryRun=true",
			wantStatus: 200, wantBody: `{"purged":1,"dryRun":true}`,
			check: wantInstances("pending", "done"),
		},
		{
			name:   "purge without a filter",
			method: "DELETE", path: "/v1/instances?dryRun=false",
			wantStatus: 400, wantBody: `{"error":"bad input: say which finished instances to purge, with the filters of GET /v1/instances (status, finishedBefore, name, …); status=Completed\u0026status=Failed\u0026status=Canceled\u0026status=Terminated takes them all"}`,
			check: wantInstances("pending", "done"),
		},
		{
			name:   "purge with a parameter it does not take",
			method: "DELETE", path: "/v1/instances?status=Completed&limit=5",
			wantStatus: 400, wantBody: `{"error":"bad input: purge takes no parameter \"limit\"; it takes status, name, module, idPrefix, parent, createdAfter, createdBefore, finishedBefore, where"}`,
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
			wantBody: details(`{"id":"pending","name":"Greeting","moduleHash":"`+hash+`","executionId":1,"status":"Completed","input":"you","result":"Hello, you!","createdAt":"2025-01-02T03:04:09Z","updatedAt":"2025-01-02T03:04:10Z"`,
				`{"id":1,"events":2,"startedAt":"2025-01-02T03:04:09Z","endedAt":"2025-01-02T03:04:10Z","end":"OrchestrationCompleted"}`, ""),
		},
		{
			name:   "brief wait until done: the instance alone",
			method: "GET", path: "/v1/instances/pending?wait=30s&brief=true",
			wantStatus: 200,
			wantBody:   `{"id":"pending","name":"Greeting","moduleHash":"` + hash + `","executionId":1,"status":"Completed","input":"you","result":"Hello, you!","createdAt":"2025-01-02T03:04:09Z","updatedAt":"2025-01-02T03:04:10Z"}`,
		},
		{
			name:   "brief that is not true or false",
			method: "GET", path: "/v1/instances/pending?brief=yes",
			wantStatus: 400, wantBody: `{"error":"bad input: brief=\"yes\" is not true or false"}`,
		},
		{
			name:   "wait for a failure",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Fails", `null`, "f") },
			method: "GET", path: "/v1/instances/f?wait=1s",
			wantStatus: 200,
			wantBody: details(`{"id":"f","name":"Fails","moduleHash":"`+hash+`","executionId":1,"status":"Failed","input":null,"failure":{"message":"boom"},"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:11Z"`,
				`{"id":1,"events":2,"startedAt":"2025-01-02T03:04:10Z","endedAt":"2025-01-02T03:04:11Z","end":"OrchestrationFailed"}`, ""),
		},
		{
			name:   "wait runs out",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Slow", `1`, "slow") },
			method: "GET", path: "/v1/instances/slow?wait=1.5s",
			wantElapsed: 1500 * time.Millisecond,
			wantStatus:  200,
			wantBody: details(`{"id":"slow","name":"Slow","moduleHash":"`+hash+`","executionId":1,"status":"Running","input":1,"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:11Z"`,
				`{"id":1,"events":1,"startedAt":"2025-01-02T03:04:10Z"}`, "2025-01-02T03:04:11Z"),
		},
		{
			name:   "wait is capped at a minute",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Slow", `1`, "slow") },
			method: "GET", path: "/v1/instances/slow?wait=1h",
			wantElapsed: time.Minute,
			wantStatus:  200,
			wantBody: details(`{"id":"slow","name":"Slow","moduleHash":"`+hash+`","executionId":1,"status":"Running","input":1,"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:11Z"`,
				`{"id":1,"events":1,"startedAt":"2025-01-02T03:04:10Z"}`, "2025-01-02T03:04:11Z"),
		},
		{
			name:   "wait that runs out while reading answers with a fresh read",
			setup:  func(t *testing.T, h *fakehost.Host) { start(t, h, "Stuck", `1`, "stuck") },
			method: "GET", path: "/v1/instances/stuck?wait=2s",
			wantElapsed: 2 * time.Second,
			wantStatus:  200,
			wantBody: details(`{"id":"stuck","name":"Stuck","moduleHash":"`+hash+`","executionId":1,"status":"Pending","input":1,"createdAt":"2025-01-02T03:04:10Z","updatedAt":"2025-01-02T03:04:10Z"`,
				`{"id":1,"events":1,"startedAt":"2025-01-02T03:04:10Z"}`, "2025-01-02T03:04:10Z"),
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
			name:   "history of an execution that does not exist",
			method: "GET", path: "/v1/instances/done/history?execution=2",
			wantStatus: 404, wantBody: `{"error":"execution not found: \"done\" has no execution 2; its executions are 1 to 1"}`,
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
				if inst, err := h.Instance(context.Background(), "done"); !errors.Is(err, api.ErrNotFound) {
					t.Errorf("after the purge: %+v, %v; want it not found", inst, err)
				}
			},
		},
		{
			name:   "purge what has not finished",
			method: "DELETE", path: "/v1/instances/pending",
			wantStatus: 409, wantBody: `{"error":"instance not finished: \"pending\" has not ended; cancel or terminate it, or wait for it to end, then purge it"}`,
			check: wantInput("pending", `"you"`),
		},
		{
			name:   "purge not found",
			method: "DELETE", path: "/v1/instances/nope",
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
		{
			name:   "raise",
			method: "POST", path: "/v1/instances/pending/events", body: `{"name": "Approve", "data": true, "persistent": true}`,
			wantStatus: 202, wantBody: `{"name":"Approve","data":true,"persistent":true}`,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.Raised(); len(got) != 1 || got[0].Name != "Approve" || !got[0].Persistent {
					t.Errorf("raised %+v, want the persistent event Approve", got)
				}
			},
		},
		{
			name:   "raise for a finished instance",
			method: "POST", path: "/v1/instances/done/events", body: `{"name": "Approve"}`,
			wantStatus: 409, wantBody: `{"error":"instance finished: \"done\" is Completed; nothing more can happen to it"}`,
			check: wantRequests(),
		},
		{
			name:   "raise past the limit of persistent events",
			setup:  failing("Raise", fmt.Errorf("%w: \"pending\" already has 20 persistent events taken or waiting", api.ErrTooManyEvents)),
			method: "POST", path: "/v1/instances/pending/events", body: `{"name": "Approve", "persistent": true}`,
			wantStatus: 409, wantBody: `{"error":"too many persistent events: \"pending\" already has 20 persistent events taken or waiting"}`,
		},
		{
			name:   "raise without a body",
			method: "POST", path: "/v1/instances/pending/events",
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is empty; send a JSON object such as {\"name\": \"Approval\", \"data\": true}"}`,
		},
		{
			name:   "raise with data that is not UTF-8",
			method: "POST", path: "/v1/instances/pending/events", body: "{\"name\": \"A\", \"data\": \"\xc3\x28\"}",
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is not I-JSON (RFC 7493): invalid UTF-8 at byte 23"}`,
			check: wantRequests(),
		},
		{
			name:   "cancel",
			method: "POST", path: "/v1/instances/pending/cancel", body: `{"reason": "enough"}`,
			wantStatus: 202, wantBody: `{"reason":"enough"}`,
			check: wantRequests("pending: enough"),
		},
		{
			name:   "cancel without a body",
			method: "POST", path: "/v1/instances/pending/cancel",
			wantStatus: 202, wantBody: `{}`,
			check: wantRequests("pending: "),
		},
		{
			name:   "cancel a finished instance",
			method: "POST", path: "/v1/instances/done/cancel",
			wantStatus: 409, wantBody: `{"error":"instance finished: \"done\" is Completed; nothing more can happen to it"}`,
			check: wantRequests(),
		},
		{
			name:   "terminate",
			method: "POST", path: "/v1/instances/pending/terminate", body: `{"reason": "stuck"}`,
			wantStatus: 202, wantBody: `{"reason":"stuck"}`,
			check: wantRequests("terminate pending: stuck"),
		},
		{
			name:   "terminate a finished instance",
			method: "POST", path: "/v1/instances/done/terminate",
			wantStatus: 409, wantBody: `{"error":"instance finished: \"done\" is Completed; nothing more can happen to it"}`,
		},
		{
			name:   "terminate an unknown instance",
			method: "POST", path: "/v1/instances/nope/terminate",
			wantStatus: 404, wantBody: `{"error":"instance not found: \"nope\""}`,
		},
		{
			name: "queue",
			setup: func(t *testing.T, h *fakehost.Host) {
				h.SetQueue(store.QueueStats{Ready: 3, ReadyInstances: 2, Starts: 1, Timers: 4, NextTimer: time.Date(2025, 1, 2, 4, 0, 0, 0, time.UTC), Locked: 1, Activities: 5, Running: 6,
					OldestReady:    &store.WaitingItem{InstanceID: "a", What: "ExternalEvent", Since: time.Date(2025, 1, 2, 3, 0, 0, 0, time.UTC)},
					OldestActivity: &store.WaitingItem{InstanceID: "b", What: "Charge", Since: time.Date(2025, 1, 2, 3, 1, 0, 0, time.UTC)}})
			},
			method: "GET", path: "/v1/queue",
			wantStatus: 200,
			wantBody: `{"ready":3,"readyInstances":2,"starts":1,"oldestReady":{"instanceId":"a","what":"ExternalEvent","since":"2025-01-02T03:00:00Z"},` +
				`"timers":4,"nextTimer":"2025-01-02T04:00:00Z","running":1,"activities":5,"activitiesRunning":6,"oldestActivity":{"instanceId":"b","what":"Charge","since":"2025-01-02T03:01:00Z"}}`,
		},
		{
			name:   "an empty queue",
			method: "GET", path: "/v1/queue",
			wantStatus: 200, wantBody: `{"ready":0,"readyInstances":0,"starts":0,"timers":0,"running":0,"activities":0,"activitiesRunning":0}`,
		},
		{
			name:   "health",
			method: "GET", path: "/healthz",
			wantStatus: 200, wantBody: `{"status":"ok"}`,
		},
		{
			name:   "ready",
			method: "GET", path: "/readyz",
			wantStatus: 200, wantBody: `{"status":"ready"}`,
		},
		{
			name:   "not ready",
			setup:  failing("Ready", fmt.Errorf("%w: the host is starting: it loads the modules its waiting work runs on", api.ErrNotReady)),
			method: "GET", path: "/readyz",
			wantStatus: 503, wantBody: `{"error":"not ready: the host is starting: it loads the modules its waiting work runs on"}`,
		},
		{
			name:   "access without tokens",
			method: "GET", path: "/v1/access",
			wantStatus: 200, wantBody: `{"access":"admin","tokenRequired":false,"token":"anonymous"}`,
		},
		{
			name:   "a dashboard file it does not have",
			method: "GET", path: "/ui/nope.js",
			wantStatus: 404, wantBody: `{"error":"no such path: /ui/nope.js; the dashboard is at /"}`,
		},
		{
			name:   "a path it does not serve",
			method: "GET", path: "/v1/instance/done",
			wantStatus: 404, wantBody: `{"error":"no such path: /v1/instance/done; the API is described at /v1/openapi.json"}`,
		},
		{
			name:   "a method a path does not serve",
			method: "PUT", path: "/v1/instances/done",
			wantStatus: 405, wantBody: `{"error":"method not allowed: PUT is not served for /v1/instances/done; it serves DELETE, GET, HEAD"}`,
		},
		{
			name:   "create a schedule",
			method: "POST", path: "/v1/schedules", body: `{"name": "nightly", "cron": "0 3 * * *", "orchestration": "Greeting", "input": "world"}`,
			wantStatus: 201,
			wantBody:   `{"name":"nightly","cron":"0 3 * * *","orchestration":"Greeting","input":"world","overlap":"skip","catchupWindow":"","paused":false,"nextRuns":[],"started":0,"skipped":0,"missed":0,"createdAt":"2025-01-02T03:04:10Z"}`,
		},
		{
			name:   "a schedule refused",
			method: "POST", path: "/v1/schedules", body: `{"name": "nightly", "orchestration": "Greeting"}`,
			wantStatus: 400, wantBody: `{"error":"bad input: a schedule needs a name, and a cron expression or an interval"}`,
		},
		{
			name:   "a schedule with a field it does not know",
			method: "POST", path: "/v1/schedules", body: `{"name": "nightly", "every": "1m", "orchestration": "Greeting", "overlap_policy": "skip"}`,
			wantStatus: 400, wantBody: `{"error":"bad input: the request body is not a JSON object such as ` + scheduleExampleJSON + `: json: unknown field \"overlap_policy\""}`,
		},
		{
			name:   "list schedules",
			setup:  withSchedule,
			method: "GET", path: "/v1/schedules",
			wantStatus: 200, wantBody: `{"schedules":[` + scheduleJSON + `]}`,
		},
		{
			name:   "pause a schedule",
			setup:  withSchedule,
			method: "POST", path: "/v1/schedules/nightly/pause", body: `{"note": "database down"}`,
			wantStatus: 200, wantBody: strings.Replace(scheduleJSON, `"paused":false`, `"paused":true,"note":"database down"`, 1),
		},
		{
			name:   "trigger a schedule",
			setup:  withSchedule,
			method: "POST", path: "/v1/schedules/nightly/trigger",
			wantStatus: 201, wantBody: `{"slot":"2025-01-02T03:04:11Z","firedAt":"2025-01-02T03:04:11Z","outcome":"started","instanceId":"nightly:manual:2025-01-02T03:04:11Z","manual":true}`,
		},
		{
			name:   "delete a schedule",
			setup:  withSchedule,
			method: "DELETE", path: "/v1/schedules/nightly",
			wantStatus: 200, wantBody: scheduleJSON,
			check: func(t *testing.T, h *fakehost.Host) {
				if all, _ := h.Schedules(context.Background()); len(all) != 0 {
					t.Errorf("schedules %+v; want none", all)
				}
			},
		},
		{
			name:   "a schedule that does not exist",
			method: "GET", path: "/v1/schedules/nope",
			wantStatus: 404, wantBody: `{"error":"schedule not found: \"nope\""}`,
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
				handler := h.Handler(server.Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: withoutTime}))})
				rec := httptest.NewRecorder()
				began := time.Now()
				body, contentType := tt.body, tt.contentType
				switch {
				case tt.form != nil:
					body, contentType = multipartBody(tt.form...)
				case contentType == "" && tt.method == "POST":
					contentType = "application/json"
				}
				req := httptest.NewRequest(tt.method, "http://localhost"+tt.path, strings.NewReader(body))
				if contentType != "" {
					req.Header.Set("Content-Type", contentType)
				}
				handler.ServeHTTP(rec, req)
				checkAgainstOpenAPI(t, req, rec)
				wantLog := tt.wantLog
				if tt.wantStatus >= 500 {
					wantLog += fmt.Sprintf("level=WARN msg=request method=%s path=%s status=%d duration=%s\n", tt.method, req.URL.Path, tt.wantStatus, tt.wantElapsed)
				}
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
				if got := log.String(); got != wantLog {
					t.Errorf("log %q, want %q", got, wantLog)
				}
				if tt.check != nil {
					tt.check(t, h)
				}
			})
		})
	}
}

// scheduleJSON is the schedule withSchedule creates, as the fake answers
// with it.
const scheduleJSON = `{"name":"nightly","every":"1h","orchestration":"Greeting","input":"world","overlap":"skip","catchupWindow":"","paused":false,"nextRuns":[],"started":0,"skipped":0,"missed":0,"createdAt":"2025-01-02T03:04:10Z"}`

// scheduleExampleJSON is the example of a schedule the server's errors give.
const scheduleExampleJSON = `{\"name\": \"nightly\", \"cron\": \"0 3 * * *\", \"timezone\": \"Europe/Paris\", \"orchestration\": \"Report\", \"input\": {\"day\": \"yesterday\"}}`

// withSchedule creates the schedule "nightly", every hour.
func withSchedule(t *testing.T, h *fakehost.Host) {
	t.Helper()
	if _, err := h.CreateSchedule(context.Background(), api.ScheduleRequest{Name: "nightly", Every: "1h", Orchestration: "Greeting", Input: json.RawMessage(`"world"`)}); err != nil {
		t.Fatal(err)
	}
}

// wantEnv checks the environment of the newest module.
func wantEnv(env ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		mods, _ := h.Modules(context.Background())
		if len(mods) == 0 || !slices.Equal(mods[0].Env, env) {
			t.Errorf("modules %+v; want the newest with environment %q", mods, env)
		}
	}
}

// wantQuery checks the query the fake's List was given last (times in
// UTC).
func wantQuery(q store.InstanceQuery) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		got := h.ListQuery()
		for _, t := range []*time.Time{&got.Filter.CreatedAfter, &got.Filter.CreatedBefore, &got.Filter.FinishedBefore} {
			*t = t.UTC()
		}
		if !reflect.DeepEqual(got, q) {
			t.Errorf("query %+v, want %+v", got, q)
		}
	}
}

// wantInstances checks the fake's instances, newest first.
func wantInstances(ids ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		page, _ := h.List(context.Background(), store.InstanceQuery{})
		var got []string
		for _, inst := range page.Instances {
			got = append(got, inst.ID)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("instances %q, want %q", got, ids)
		}
	}
}

// wantRequests checks the cancellations and terminations the fake took.
func wantRequests(want ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if got := h.Cancelled(); !slices.Equal(got, want) {
			t.Errorf("requests %q, want %q", got, want)
		}
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
	t.Parallel()
	tests := []struct{ path, want string }{
		{"/v1/modules", `{"modules":[]}`},
		{"/v1/instances", `{"instances":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			fakehost.New(orchestrations).Handler(server.Options{}).ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+tt.path, nil))
			if rec.Code != http.StatusOK || rec.Body.String() != tt.want+"\n" {
				t.Errorf("got %d %s, want 200 %s", rec.Code, rec.Body, tt.want)
			}
		})
	}
}

func TestHandlerWithoutLogger(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.Fail("List", errors.New("host: list: broken"))
	rec := httptest.NewRecorder()
	h.Handler(server.Options{}).ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/instances", nil))
	if rec.Code != http.StatusInternalServerError || rec.Body.String() != `{"error":"list: broken"}`+"\n" {
		t.Errorf("got %d %s, want 500 with the error", rec.Code, rec.Body)
	}
}
