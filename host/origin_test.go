package host_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
)

// webRequest is a request a web page (or curl) could send a host.
type webRequest struct {
	name, method, path string
	// host, if set, is the request's Host header: the name a page that
	// rebound its own name to the host's address sends.
	host string
	// origin and fetchSite, if set, are the Origin and Sec-Fetch-Site
	// headers a browser adds.
	origin, fetchSite string
	contentType, body string
	wantStatus        int
	// want is in the error of a refusal, or in the body of an answer.
	want string
}

// webAttacks are the requests a page of another origin could make a
// browser send a host on loopback without a token (or DNS rebinding
// could), each refused; hostPort is the host's address.
func webAttacks(hostPort, wasm string) []webRequest {
	form, formType := multipartBody("module", wasm, "env", "STOLEN=1")
	const start = `{"name": "Greeting", "input": "web", "id": "web"}`
	return []webRequest{
		{name: "a text/plain start, as fetch or a form sends it without a preflight", method: "POST", path: "/v1/instances",
			contentType: "text/plain;charset=UTF-8", body: start, wantStatus: 415,
			want: `POST /v1/instances takes a body of type application/json, not "text/plain;charset=UTF-8"`},
		{name: "a start as a url-encoded form", method: "POST", path: "/v1/instances",
			contentType: "application/x-www-form-urlencoded", body: start, wantStatus: 415, want: "takes a body of type application/json"},
		{name: "a cancel without a body or its type", method: "POST", path: "/v1/instances/web/cancel", wantStatus: 415,
			want: "POST /v1/instances/{id}/cancel takes a body of type application/json, and this one says none; send Content-Type: application/json"},
		{name: "a deploy as a url-encoded form (curl --data-binary's default)", method: "POST", path: "/v1/modules",
			contentType: "application/x-www-form-urlencoded", body: wasm, wantStatus: 415,
			want: "POST /v1/modules takes a body of type application/wasm or multipart/form-data"},
		{name: "a JSON start from a page of another origin", method: "POST", path: "/v1/instances",
			origin: "http://attacker.example:8080", contentType: "application/json", body: start, wantStatus: 403,
			want: `forbidden: a web page of another origin (Origin "http://attacker.example:8080") may not change anything on this host`},
		{name: "a JSON start another site's page sends (Sec-Fetch-Site)", method: "POST", path: "/v1/instances",
			origin: "http://attacker.example:8080", fetchSite: "cross-site", contentType: "application/json", body: start, wantStatus: 403,
			want: "forbidden: a web page of another origin"},
		{name: "a JSON start from a page of another port on loopback", method: "POST", path: "/v1/instances",
			origin: "http://127.0.0.1:1", fetchSite: "same-site", contentType: "application/json", body: start, wantStatus: 403,
			want: "forbidden: a web page of another origin"},
		{name: "a form-data deploy from a page of another origin (a type sent without a preflight)", method: "POST", path: "/v1/modules",
			origin: "http://attacker.example:8080", contentType: formType, body: form, wantStatus: 403, want: "forbidden: a web page of another origin"},
		{name: "a read after DNS rebinding", method: "GET", path: "/v1/instances", host: "attacker.example:" + port(hostPort), wantStatus: 421,
			want: `misdirected request: this host does not answer to "attacker.example:` + port(hostPort) + `"`},
		{name: "a module listing after DNS rebinding", method: "GET", path: "/v1/modules", host: "attacker.example", wantStatus: 421,
			want: "durabox serve --allowed-hosts NAME"},
		{name: "the dashboard after DNS rebinding", method: "GET", path: "/", host: "attacker.example:" + port(hostPort), wantStatus: 421,
			want: "misdirected request"},
		{name: "a start after DNS rebinding", method: "POST", path: "/v1/instances", host: "attacker.example:" + port(hostPort),
			origin: "http://attacker.example:" + port(hostPort), fetchSite: "same-origin", contentType: "application/json", body: start,
			wantStatus: 421, want: "misdirected request"},
	}
}

// webAllowed are requests the host serves: its own dashboard's, a
// client's, and a probe's.
func webAllowed(hostPort string) []webRequest {
	return []webRequest{
		{name: "the dashboard's own start", method: "POST", path: "/v1/instances", origin: "http://" + hostPort, fetchSite: "same-origin",
			contentType: "application/json", body: `{"name": "Greeting", "input": "dashboard", "id": "dashboard"}`, wantStatus: 201},
		{name: "a client's start, with a charset", method: "POST", path: "/v1/instances",
			contentType: "application/json; charset=utf-8", body: `{"name": "Greeting", "input": "client", "id": "client"}`, wantStatus: 201},
		{name: "a read by localhost", method: "GET", path: "/v1/instances", host: "LOCALHOST:" + port(hostPort), wantStatus: 200},
		{name: "a read by [::1]", method: "GET", path: "/v1/modules", host: "[::1]:" + port(hostPort), wantStatus: 200},
		{name: "a read with another origin, which the page cannot see", method: "GET", path: "/v1/modules", origin: "http://attacker.example",
			fetchSite: "cross-site", wantStatus: 200},
		{name: "a liveness probe by another name", method: "GET", path: "/healthz", host: "10.1.2.3:7070", wantStatus: 200},
		{name: "a readiness probe by another name", method: "GET", path: "/readyz", host: "durabox-0.durabox", wantStatus: 200},
	}
}

// port returns the port of host:port.
func port(hostPort string) string { return hostPort[strings.LastIndex(hostPort, ":")+1:] }

// send sends req to the host at base, and returns its status and body.
func (w webRequest) send(t *testing.T, base string) (int, string) {
	t.Helper()
	var body io.Reader
	if w.body != "" {
		body = strings.NewReader(w.body)
	}
	req, err := http.NewRequest(w.method, base+w.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if w.host != "" {
		req.Host = w.host
	}
	for name, v := range map[string]string{"Origin": w.origin, "Sec-Fetch-Site": w.fetchSite, "Content-Type": w.contentType} {
		if v != "" {
			req.Header.Set(name, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao != "" {
		t.Errorf("%s: the answer lets pages of %q read it", w.name, acao)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(got)
}

// check checks an answer to w.
func (w webRequest) check(t *testing.T, status int, body string) {
	t.Helper()
	if status != w.wantStatus {
		t.Errorf("%s: status %d (%.300s); want %d", w.name, status, body, w.wantStatus)
		return
	}
	if w.wantStatus < 300 {
		if !strings.Contains(body, w.want) {
			t.Errorf("%s: %d %s; want %q in it", w.name, status, body, w.want)
		}
		return
	}
	var e struct{ Error string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || !strings.Contains(e.Error, w.want) {
		t.Errorf("%s: %d %s; want an error with %q", w.name, status, body, w.want)
	}
}

// TestWebPagesCannotDriveTheHost sends a real host on loopback without a
// token, over HTTP, what a web page of another origin could make the
// browser send (or a page that rebound its name to the host): each is
// refused, and nothing is deployed or started; the host's own dashboard,
// clients and probes are served.
func TestWebPagesCannotDriveTheHost(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	hello := h.deploy(t, "examples/wasm/hello")
	srv := serveAPI(t, h, nil)
	hostPort := strings.TrimPrefix(srv.URL, "http://")

	for _, w := range webAttacks(hostPort, string(wasmOf(t, "examples/wasm/approval"))) {
		status, body := w.send(t, srv.URL)
		w.check(t, status, body)
	}
	wantStored(t, h, hello.Hash)
	for _, w := range webAllowed(hostPort) {
		status, body := w.send(t, srv.URL)
		w.check(t, status, body)
	}
	wantStored(t, h, hello.Hash, "client", "dashboard")
}

// serveAPI serves h's HTTP API as a host on loopback without a token
// does, through middle if not nil, until the test ends.
func serveAPI(t *testing.T, h *testHost, middle func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	if middle != nil {
		handler = middle(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// wasmOf returns the module the package pkg builds to.
func wasmOf(t *testing.T, pkg string) []byte {
	t.Helper()
	wasm, err := guestbuild.Wasm(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// wantStored checks that the host has the one module hash, and the
// instances ids (newest first).
func wantStored(t *testing.T, h *testHost, hash string, ids ...string) {
	t.Helper()
	ctx := context.Background()
	mods, err := h.Modules(ctx)
	if err != nil || len(mods) != 1 || mods[0].Hash != hash {
		t.Errorf("modules %v, %v; want only %s", moduleHashes(mods), err, hash)
	}
	page, err := h.List(ctx, store.InstanceQuery{})
	var got []string
	for _, inst := range page.Instances {
		got = append(got, inst.ID)
	}
	if err != nil || strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Errorf("instances %q, %v; want %q", got, err, ids)
	}
}

func moduleHashes(mods []store.ModuleInfo) []string {
	var hashes []string
	for _, m := range mods {
		hashes = append(hashes, m.Hash)
	}
	return hashes
}

// TestRefusalsOfWebPagesFitOpenAPI sends every route a request for
// another host, and every route that changes something a request from a
// page of another origin and a text/plain body: each is refused as
// openapi.json says.
func TestRefusalsOfWebPagesFitOpenAPI(t *testing.T) {
	t.Parallel()
	handler := fixture(t).Handler(server.Options{})
	path := strings.NewReplacer("{id}", "done", "{hash}", hash, "{file}", "app.js")
	for _, rt := range server.Routes() {
		refusals := map[string]func(*http.Request){}
		if rt.Path != "/healthz" && rt.Path != "/readyz" {
			refusals["another host"] = func(r *http.Request) { r.Host = "attacker.example:7070" }
		}
		if rt.Method != "GET" {
			refusals["another origin"] = func(r *http.Request) { r.Header.Set("Origin", "http://attacker.example") }
		}
		if rt.Method == "POST" {
			refusals["text/plain"] = func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }
		}
		for why, change := range refusals {
			req := httptest.NewRequest(rt.Method, "http://localhost"+path.Replace(rt.Path), strings.NewReader("{}"))
			change(req)
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if want := map[string]int{"another host": 421, "another origin": 403, "text/plain": 415}[why]; rec.Code != want {
				t.Errorf("%s %s from %s: %d %s; want %d", rt.Method, rt.Path, why, rec.Code, rec.Body, want)
			}
			checkAgainstOpenAPI(t, req, rec)
		}
	}
}
