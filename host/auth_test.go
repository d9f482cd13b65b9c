package host_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/server"
)

// TestAuth: with tokens, a request without one, or with one the host does
// not know, is refused (401); the read-only token reads and is refused
// (403) everything else; the worker token may use the worker protocol and
// nothing else; the admin token does everything. No token is ever logged.
func TestAuth(t *testing.T) {
	t.Parallel()
	const (
		unauthorized = `{"error":"unauthorized: this host asks for a token; send it as \"Authorization: Bearer TOKEN\" (durabox reads it from $DURABOX_TOKEN or --token-file)"}`
		wrong        = `{"error":"unauthorized: the token is not one this host accepts"}`
	)
	tests := []struct {
		name, method, path, body, authorization string
		wantStatus                              int
		wantBody                                string
	}{
		{"no token", "GET", "/v1/instances", "", "", 401, unauthorized},
		{"another scheme", "GET", "/v1/instances", "", "Basic " + adminToken, 401, unauthorized},
		{"a wrong token", "GET", "/v1/instances", "", "Bearer wrong-0123456789abcdef", 401, wrong},
		{"a prefix of the token", "GET", "/v1/instances", "", "Bearer " + adminToken[:10], 401, wrong},
		{"the token with more", "GET", "/v1/instances", "", "Bearer " + adminToken + "x", 401, wrong},
		{"no token, on an admin route", "POST", "/v1/instances", `{"name": "Greeting"}`, "", 401, unauthorized},
		{"no token, for the API's description", "GET", "/v1/openapi.json", "", "", 200, ""},
		{"no token, on a path it does not serve", "GET", "/v2/x", "", "", 404, `{"error":"no such path: /v2/x; the API is described at /v1/openapi.json"}`},
		{"the read-only token reads", "GET", "/v1/instances/done/history", "", "Bearer " + readToken, 200, ""},
		{"the read-only token, in any case of Bearer", "GET", "/v1/modules", "", "bearer " + readToken, 200, ""},
		{"the read-only token starts", "POST", "/v1/instances", `{"name": "Greeting"}`, "Bearer " + readToken, 403,
			`{"error":"forbidden: this token may only read (GET); POST /v1/instances needs the admin token"}`},
		{"the read-only token purges", "DELETE", "/v1/instances/done", "", "Bearer " + readToken, 403,
			`{"error":"forbidden: this token may only read (GET); DELETE /v1/instances/{id} needs the admin token"}`},
		{"the read-only token terminates", "POST", "/v1/instances/pending/terminate", "", "Bearer " + readToken, 403,
			`{"error":"forbidden: this token may only read (GET); POST /v1/instances/{id}/terminate needs the admin token"}`},
		{"the admin token starts", "POST", "/v1/instances", `{"name": "Greeting", "id": "new"}`, "Bearer " + adminToken, 201, `{"id":"new"}`},
		{"the admin token reads", "GET", "/v1/queue", "", "Bearer " + adminToken, 200, ""},
		{"the admin token's access", "GET", "/v1/access", "", "Bearer " + adminToken, 200, `{"access":"admin","tokenRequired":true,"token":"` + server.DefaultName("admin", adminToken) + `"}`},
		{"the read-only token's access", "GET", "/v1/access", "", "Bearer " + readToken, 200, `{"access":"read","tokenRequired":true,"token":"` + server.DefaultName("read", readToken) + `"}`},
		{"no token, for access", "GET", "/v1/access", "", "", 401, unauthorized},
		{"no token, for the metrics", "GET", "/metrics", "", "", 401, unauthorized},
		{"the read-only token, for the metrics", "GET", "/metrics", "", "Bearer " + readToken, 200, ""},
		// The fixture's API (package fakehost) takes no workers: a request
		// that passes the token's check gets 404.
		{"the worker token polls", "POST", "/v1/tasks/poll?wait=0s", `{"queue": "payments"}`, "Bearer " + workerToken, 404,
			`{"error":"no such path: /v1/tasks/poll: this host takes no workers outside it"}`},
		{"the worker token starts", "POST", "/v1/instances", `{"name": "Greeting"}`, "Bearer " + workerToken, 403,
			`{"error":"forbidden: this token is a worker's: it may only poll for, heartbeat, complete and fail tasks (/v1/tasks/...); POST /v1/instances needs the admin token"}`},
		{"the worker token reads", "GET", "/v1/instances", "", "Bearer " + workerToken, 403,
			`{"error":"forbidden: this token is a worker's: it may only poll for, heartbeat, complete and fail tasks (/v1/tasks/...); GET /v1/instances needs the admin token"}`},
		{"the read-only token polls", "POST", "/v1/tasks/poll?wait=0s", `{"queue": "payments"}`, "Bearer " + readToken, 403,
			`{"error":"forbidden: this token may only read (GET); POST /v1/tasks/poll needs a worker's token or the admin token"}`},
		{"the admin token polls", "POST", "/v1/tasks/poll?wait=0s", `{"queue": "payments"}`, "Bearer " + adminToken, 404, ""},
		{"no token, for a poll", "POST", "/v1/tasks/poll?wait=0s", `{"queue": "payments"}`, "", 401, unauthorized},
		{"no token, for the health check", "GET", "/healthz", "", "", 200, `{"status":"ok"}`},
		{"no token, for the readiness check", "GET", "/readyz", "", "", 200, `{"status":"ready"}`},
		{"no token, for the dashboard", "GET", "/", "", "", 200, ""},
		{"no token, for a file of the dashboard", "GET", "/ui/app.js", "", "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			handler := fixture(t).Handler(server.Options{Token: adminToken, ReadToken: readToken, WorkerToken: workerToken, Logger: logger})
			req := httptest.NewRequest(tt.method, "http://localhost"+tt.path, strings.NewReader(tt.body))
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.authorization != "" {
				req.Header.Set("Authorization", tt.authorization)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus || tt.wantBody != "" && rec.Body.String() != tt.wantBody+"\n" {
				t.Errorf("%d %s\nwant %d %s", rec.Code, rec.Body, tt.wantStatus, tt.wantBody)
			}
			if got, want := rec.Header().Get("WWW-Authenticate"), tt.wantStatus == 401; (got != "") != want {
				t.Errorf("WWW-Authenticate %q; want one only with a 401", got)
			}
			if rec.Code/100 == 4 && rec.Code != 404 && !strings.Contains(log.String(), `msg="request refused"`) {
				t.Errorf("log %q; want the refusal", log.String())
			}
			for _, token := range []string{adminToken, readToken, workerToken, adminToken[:10]} {
				if strings.Contains(log.String(), token) {
					t.Errorf("the log shows a token: %q", log.String())
				}
			}
		})
	}
}

// TestAuthOnLoopback: without tokens the handler serves everyone, as a
// host on loopback does, and ignores a token sent.
func TestAuthOnLoopback(t *testing.T) {
	t.Parallel()
	for _, authorization := range []string{"", "Bearer " + adminToken} {
		req := httptest.NewRequest("POST", "http://localhost/v1/instances", strings.NewReader(`{"name": "Greeting"}`))
		req.Header.Set("Content-Type", "application/json")
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		fixture(t).Handler(server.Options{}).ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Errorf("with %q: %d %s; want 201", authorization, rec.Code, rec.Body)
		}
	}
}

func TestHandlerOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    server.Options
		wantErr string
	}{
		{"a read-only token alone", server.Options{ReadToken: readToken},
			"host: a read-only token needs an admin token beside it: with none, nothing could deploy or start"},
		{"one token for both", server.Options{Token: adminToken, ReadToken: adminToken},
			"host: the read-only token is the admin token; give it a token of its own"},
		{"a worker token alone", server.Options{WorkerToken: workerToken},
			"host: a worker token needs an admin token beside it: with none, every request is the admin's and a worker token would limit nothing"},
		{"the read-only token for workers", server.Options{Token: adminToken, ReadToken: readToken, WorkerToken: readToken},
			"host: the worker token is the admin or the read-only token; give it a token of its own"},
		{"a short token", server.Options{Token: "s3cret"},
			"host: the admin token is 6 characters; use at least 16 random ones (openssl rand -hex 32 makes 64)"},
		{"a short read-only token", server.Options{Token: adminToken, ReadToken: "short"},
			"host: the read-only token is 5 characters; use at least 16 random ones (openssl rand -hex 32 makes 64)"},
		{"a token with a space", server.Options{Token: "0123456789 abcdef"}, "host: the admin token holds white space; a bearer token cannot"},
		{"two tokens of one name", server.Options{Tokens: []server.Token{{Name: "alice", Secret: adminToken}, {Name: "alice", Secret: readToken, Role: "read"}}},
			`host: two tokens are named "alice"; give each its own name`},
		{"two tokens of one secret", server.Options{Tokens: []server.Token{{Name: "alice", Secret: adminToken}, {Name: "bob", Secret: adminToken, Role: "read"}}},
			`host: tokens "alice" and "bob" have the same secret; give each its own`},
		{"a named token with an admin token of the same secret", server.Options{Token: adminToken, Tokens: []server.Token{{Name: "bob", Secret: adminToken, Role: "read"}}},
			`host: tokens "bob" and "` + server.DefaultName("admin", adminToken) + `" have the same secret; give each its own`},
		{"no admin among named tokens", server.Options{Tokens: []server.Token{{Name: "bob", Secret: readToken, Role: "read"}}},
			"host: no token is an admin's: with none, nothing could deploy or start; give one the role admin (name=SECRET, or name=SECRET:admin)"},
		{"a role that is none", server.Options{Tokens: []server.Token{{Name: "bob", Secret: readToken, Role: "reader"}}},
			`host: token "bob" has the role "reader"; a role is admin, read or worker, as in bob=SECRET:read`},
		{"a name that is none", server.Options{Tokens: []server.Token{{Name: "bob smith", Secret: readToken}}},
			`host: the token name "bob smith" is not one: use letters, digits and . _ @ -, up to 64 of them, as in alice=SECRET:admin`},
		{"a short named token", server.Options{Tokens: []server.Token{{Name: "bob", Secret: "short"}}},
			`host: token "bob"'s secret is 5 characters; use at least 16 random ones (openssl rand -hex 32 makes 64)`},
		{"a negative stall timeout", server.Options{StallTimeout: -1}, "host: StallTimeout is -1ns; it must be zero (for the default, 30s) or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := server.New(fixture(t), tt.opts); err == nil || err.Error() != tt.wantErr {
				t.Errorf("NewHandler: %v\nwant %s", err, tt.wantErr)
			}
		})
	}
}

// TestSetTokens: the handler's tokens are replaced for the requests that
// come after (serve's SIGHUP); tokens it refuses, or a change between
// asking for a token and not, leave it those it had.
func TestSetTokens(t *testing.T) {
	t.Parallel()
	handler := fixture(t).Handler(server.Options{Token: adminToken})
	setter := handler.(server.TokenSetter)
	status := func(secret string) int {
		req := httptest.NewRequest("GET", "http://localhost/v1/access", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, tt := range []struct {
		name    string
		tokens  []server.Token
		wantErr string
	}{
		{"none", nil, "host: a host that asks for a token must keep asking for one, and one that asks for none cannot begin to, without a restart"},
		{"no admin", []server.Token{{Name: "bob", Secret: readToken, Role: "read"}},
			"host: no token is an admin's: with none, nothing could deploy or start; give one the role admin (name=SECRET, or name=SECRET:admin)"},
	} {
		if err := setter.SetTokens(tt.tokens); err == nil || err.Error() != tt.wantErr {
			t.Errorf("SetTokens, %s: %v\nwant %s", tt.name, err, tt.wantErr)
		}
	}
	if got := status(adminToken); got != 200 {
		t.Fatalf("the admin token after refused changes: %d; want 200", got)
	}
	if err := setter.SetTokens([]server.Token{{Name: "alice", Secret: workerToken}, {Name: "bob", Secret: readToken, Role: "read"}}); err != nil {
		t.Fatal(err)
	}
	for secret, want := range map[string]int{adminToken: 401, workerToken: 200, readToken: 200} {
		if got := status(secret); got != want {
			t.Errorf("after SetTokens, %s...: %d; want %d", secret[:6], got, want)
		}
	}
	open := fixture(t).Handler(server.Options{}).(server.TokenSetter)
	if err := open.SetTokens([]server.Token{{Name: "alice", Secret: adminToken}}); err == nil {
		t.Error("SetTokens on a handler that asks for no token: no error")
	}
}
