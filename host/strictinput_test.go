package host_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
)

// waitingHost runs a host with the boundary guest, and on it the instance
// "waiting", which waits for the event "go"; it returns the host and its
// handler.
func waitingHost(t *testing.T) (*testHost, http.Handler) {
	t.Helper()
	h := startHost(t, host.Options{})
	h.deploy(t, boundaryGuest)
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(context.Background(), "Emit", []byte(emitInput("wait", "go")), "waiting"); err != nil {
		t.Fatal(err)
	}
	waitForCustomStatus(t, h, "waiting")
	return h, handler
}

// ask sends handler a request to localhost with body (JSON), and returns
// the answer's status and body.
func ask(handler http.Handler, method, path, body string) (int, string) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, "http://localhost"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	handler.ServeHTTP(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// TestAPIRefusesWhatIsNotIJSON sends requests whose JSON encoding/json
// would take (a lone surrogate, a name twice, bytes that are not UTF-8,
// anywhere in the body), and names that break the rule: each gets 400
// saying what is wrong, and none of them is stored: the instance they aim
// at still takes the one valid event that follows, as its first.
func TestAPIRefusesWhatIsNotIJSON(t *testing.T) {
	t.Parallel()
	h, handler := waitingHost(t)
	ctx := context.Background()
	const (
		starts = "/v1/instances"
		events = "/v1/instances/waiting/events"
		bad    = `{"error":"bad input: `
	)
	tests := []struct {
		name, path, body, want string
	}{
		{"an input with a lone surrogate", starts, `{"name":"Emit","input":"\ud800"}`,
			bad + "the request body is not I-JSON (RFC 7493): invalid surrogate pair `\\\\ud800\\\"}` in string at byte 24\"}"},
		{"an input with a name twice", starts, `{"name":"Emit","input":{"a":1,"a":2}}`,
			bad + `the request body is not I-JSON (RFC 7493): the name \"a\" appears twice in one object"}`},
		{"a start with its name twice", starts, `{"name":"Emit","name":"Call"}`,
			bad + `the request body is not I-JSON (RFC 7493): the name \"name\" appears twice in one object"}`},
		{"an event name with a lone surrogate", events, `{"name":"go\udc00","data":1}`,
			bad + "the request body is not I-JSON (RFC 7493): invalid surrogate pair `\\\\udc00\\\",\\\"dat` in string at byte 11\"}"},
		{"event data with a name twice", events, `{"name":"go","data":{"a":1,"a":2}}`,
			bad + `the request body is not I-JSON (RFC 7493): the name \"a\" appears twice in one object"}`},
		{"event data with a lone surrogate", events, `{"name":"go","data":"\ud83d"}`,
			bad + "the request body is not I-JSON (RFC 7493): invalid surrogate pair `\\\\ud83d\\\"}` in string at byte 21\"}"},
		{"event data that is not UTF-8", events, "{\"name\":\"go\",\"data\":\"caf\xe9\"}",
			bad + `the request body is not I-JSON (RFC 7493): invalid UTF-8 at byte 24"}`},
		{"an event name with NUL", events, `{"name":"go\u0000","data":1}`,
			bad + `event name \"go\\x00\" holds a control character (U+0000 at byte 2): a name is 1 to 256 bytes of UTF-8 without control characters"}`},
		{"an empty event name", events, `{"data":1}`,
			bad + `event name \"\" is empty: a name is 1 to 256 bytes of UTF-8 without control characters"}`},
		{"a cancel reason with a lone surrogate", "/v1/instances/waiting/cancel", `{"reason":"\udfff"}`,
			bad + "the request body is not I-JSON (RFC 7493): invalid surrogate pair `\\\\udfff\\\"}` in string at byte 11\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, got := ask(handler, http.MethodPost, tt.path, tt.body); code != http.StatusBadRequest || got != tt.want {
				t.Errorf("got %d %s\nwant 400 %s", code, got, tt.want)
			}
		})
	}
	t.Run("through the Go API", func(t *testing.T) {
		_, err := h.Start(ctx, "Emit", []byte(`{"kind":"none","kind":"wait"}`), "")
		if want := `host: bad input: the input is not I-JSON (RFC 7493): the name "kind" appears twice in one object`; !errors.Is(err, api.ErrBadInput) || err.Error() != want {
			t.Errorf("Start: %v\nwant %s", err, want)
		}
		err = h.Raise(ctx, "waiting", "go", []byte(`"\udbff\udbff"`), false)
		if want := "host: bad input: the event's data is not I-JSON (RFC 7493): invalid surrogate pair `\\udbff\\udbff` in string at byte 1"; !errors.Is(err, api.ErrBadInput) || err.Error() != want {
			t.Errorf("Raise: %v\nwant %s", err, want)
		}
	})
	page, err := h.List(ctx, store.InstanceQuery{})
	if err != nil || len(page.Instances) != 1 {
		t.Fatalf("instances: %+v, %v; want only the one started first", page.Instances, err)
	}
	if err := h.Raise(ctx, "waiting", "go", []byte(`7`), false); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, "waiting"); inst.Status != engine.StatusCompleted || string(inst.Result) != "7" {
		t.Errorf("the instance took %s %s %+v; want the valid event's data, 7, as its first", inst.Status, inst.Result, inst.Failure)
	}
}

// TestAPIBoundsNamesReasonsAndEchoes sends 100 KB where a name, a reason
// or a parameter goes: each gets 4xx naming the limit where there is one,
// and no answer echoes more than a bounded prefix of what it refuses.
func TestAPIBoundsNamesReasonsAndEchoes(t *testing.T) {
	t.Parallel()
	h, handler := waitingHost(t)
	ctx := context.Background()
	long := strings.Repeat("n", 100<<10)
	prefix := `\"` + strings.Repeat("n", 64) + `\"…`
	nameRule := `is 102400 bytes: a name is 1 to 256 bytes of UTF-8 without control characters"}`
	reasonRule := `is 102400 bytes: a reason is at most 1024 bytes of UTF-8"}`
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"an event name", http.MethodPost, "/v1/instances/waiting/events", `{"name":"` + long + `"}`, 400,
			`{"error":"bad input: event name ` + prefix + ` ` + nameRule},
		{"a cancel reason", http.MethodPost, "/v1/instances/waiting/cancel", `{"reason":"` + long + `"}`, 400,
			`{"error":"bad input: cancel reason ` + prefix + ` ` + reasonRule},
		{"a terminate reason", http.MethodPost, "/v1/instances/waiting/terminate", `{"reason":"` + long + `"}`, 400,
			`{"error":"bad input: terminate reason ` + prefix + ` ` + reasonRule},
		{"an orchestration name", http.MethodPost, "/v1/instances", `{"name":"` + long + `"}`, 400,
			`{"error":"bad input: orchestration name ` + prefix + ` ` + nameRule},
		{"an instance id to start", http.MethodPost, "/v1/instances", `{"name":"Emit","id":"` + long + `"}`, 400,
			`{"error":"bad input: instance id ` + prefix + ` must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"}`},
		{"an instance id to read", http.MethodGet, "/v1/instances/" + long, "", 404,
			`{"error":"instance not found: ` + prefix + `"}`},
		{"an instance id to raise to", http.MethodPost, "/v1/instances/" + long + "/events", `{"name":"go"}`, 404,
			`{"error":"instance not found: ` + prefix + `"}`},
		{"a limit", http.MethodGet, "/v1/instances?limit=" + long, "", 400,
			`{"error":"bad input: limit=` + prefix + ` is not a number from 1 to 1000"}`},
		{"a cursor", http.MethodGet, "/v1/instances?cursor=" + long, "", 400,
			`{"error":"bad input: the cursor ` + prefix + ` is not one this host gave; start again without it"}`},
		{"a wait", http.MethodGet, "/v1/instances/waiting?wait=" + long, "", 400,
			`{"error":"bad input: wait=` + prefix + ` is not a duration such as 30s"}`},
		{"a status", http.MethodGet, "/v1/instances?status=" + long, "", 400,
			`{"error":"bad input: ` + prefix + ` is not a status; an instance is [Pending Running Completed Failed Canceled Terminated]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, got := ask(handler, tt.method, tt.path, tt.body); code != tt.status || got != tt.want {
				t.Errorf("got %d %.300s\nwant %d %s", code, got, tt.status, tt.want)
			}
		})
	}
	if q, err := h.Queue(ctx); err != nil || q.Ready != 0 {
		t.Errorf("queue %+v, %v; want nothing stored for the instance", q, err)
	}
}
