package host_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
)

// apiRoute is a route of the HTTP API: a method and a path, whose
// parameter, if it has one, is in braces.
type apiRoute struct{ method, path string }

// apiRoutes returns the routes host/server/openapi.json describes (a test holds
// them to the handler's), sorted.
func apiRoutes(f *testing.F) []apiRoute {
	data, err := os.ReadFile("server/openapi.json")
	if err != nil {
		f.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		f.Fatal(err)
	}
	var routes []apiRoute
	for path, ops := range doc.Paths {
		for method := range ops {
			if m := strings.ToUpper(method); slices.Contains([]string{"GET", "POST", "DELETE", "PUT", "PATCH"}, m) {
				routes = append(routes, apiRoute{m, path})
			}
		}
	}
	slices.SortFunc(routes, func(a, b apiRoute) int { return strings.Compare(a.method+" "+a.path, b.method+" "+b.path) })
	return routes
}

// apiRequest is one request FuzzAPI sends: to routes[route % len],
// with param as its path parameter, query as its query and body, of
// contentType (a POST's is application/json unless set).
type apiRequest struct {
	route                     uint8
	param, query, contentType string
	body                      []byte
}

// FuzzAPI sends arbitrary requests to every route of the HTTP API (those
// host/server/openapi.json describes), over HTTP, to the real handler
// (server.New) of a host running on a SQLite file, which has a module
// deployed and an instance of it that has failed (the module emits no
// command: every instance of it fails at its first turn). No answer is a
// 5xx; every refusal is an ErrorResponse with a message, and stores
// nothing (the host lists as many instances and modules after it as
// before); nothing panics. The seed corpus is testdata/fuzz/FuzzAPI and a
// request of each route here.
func FuzzAPI(f *testing.F) {
	routes := apiRoutes(f)
	manifest := abi.EncodeManifest(&abi.Manifest{Orchestrations: []string{"Hello"}, Activities: []string{"SayHello"}})
	wasm := manifestModule(manifest)
	sum := sha256.Sum256(wasm)
	hash := hex.EncodeToString(sum[:])
	seeds := map[string]apiRequest{
		"POST /v1/modules":                  {body: wasm, contentType: "application/wasm"},
		"GET /v1/modules":                   {},
		"DELETE /v1/modules/{hash}":         {param: hash[:12]},
		"POST /v1/instances":                {body: []byte(`{"name":"Hello","input":{"a":[1,"x"]},"id":"new","module":"` + hash[:8] + `"}`)},
		"GET /v1/instances":                 {query: "status=Failed&name=Hello&limit=2&createdAfter=2026-01-01T00:00:00Z"},
		"DELETE /v1/instances":              {query: "status=Failed&dryRun=true"},
		"GET /v1/instances/{id}":            {param: "done", query: "wait=1ms"},
		"DELETE /v1/instances/{id}":         {param: "missing"},
		"GET /v1/instances/{id}/history":    {param: "done", query: "execution=1"},
		"POST /v1/instances/{id}/events":    {param: "done", body: []byte(`{"name":"go","data":"\u00e9","persistent":true}`)},
		"POST /v1/instances/{id}/cancel":    {param: "done", body: []byte(`{"reason":"r"}`)},
		"POST /v1/instances/{id}/terminate": {param: "missing"},
		"GET /v1/instances/{id}/replay":     {param: "done", query: "module=" + hash[:8] + "&execution=1"},
		"GET /v1/instances/{id}/bundle":     {param: "done"},
		"POST /v1/instances/{id}/reset":     {param: "done", body: []byte(`{"toEvent":1,"dryRun":true}`)},
		"POST /v1/upgrades":                 {body: []byte(`{"from":"Hello","to":"` + hash + `","dryRun":true,"instances":["done"]}`)},
		"GET /ui/{file}":                    {param: "app.js"},
	}
	for i, rt := range routes {
		req := seeds[rt.method+" "+rt.path]
		f.Add(uint8(i), req.param, req.query, req.contentType, req.body)
	}
	api := apiHost(f, wasm)
	f.Fuzz(func(t *testing.T, route uint8, param, query, contentType string, body []byte) {
		api.send(t, routes[int(route)%len(routes)], apiRequest{route, param, query, contentType, body})
	})
}

// fuzzAPI is the host FuzzAPI sends its requests to, and its address.
type fuzzAPI struct {
	h   *host.Host
	srv *httptest.Server
}

// apiHost runs fuzzHost's host, with wasm deployed and an instance "done"
// of its orchestration Hello, which has failed; and serves its API.
func apiHost(f *testing.F, wasm []byte) *fuzzAPI {
	h := fuzzHost(f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	handler, err := server.New(h, server.Options{Metrics: h.Metrics()})
	if err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	f.Cleanup(func() { // before fuzzHost's, which closes the host
		srv.Close()
		cancel()
		<-done
	})
	if _, err := h.Deploy(ctx, wasm); err != nil {
		f.Fatal(err)
	}
	if _, err := h.Start(ctx, "Hello", nil, "done"); err != nil {
		f.Fatal(err)
	}
	waitCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if inst, err := h.Wait(waitCtx, "done"); err != nil || !inst.Status.IsTerminal() {
		f.Fatalf("the instance of the module that emits nothing: %s (%v), want it to have failed", inst.Status, err)
	}
	return &fuzzAPI{h: h, srv: srv}
}

// send sends req to rt and checks the answer.
func (a *fuzzAPI) send(t *testing.T, rt apiRoute, req apiRequest) {
	target := a.srv.URL + strings.NewReplacer("{id}", url.PathEscape(req.param), "{hash}", url.PathEscape(req.param), "{file}", url.PathEscape(req.param)).Replace(rt.path)
	if req.query != "" {
		target += "?" + req.query
	}
	r, err := http.NewRequest(rt.method, target, bytes.NewReader(req.body))
	if err != nil || strings.ContainsFunc(r.URL.RequestURI(), func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		return // not a request a client can send (net/http answers one it cannot parse itself)
	}
	if req.contentType == "" && rt.method == "POST" {
		req.contentType = "application/json" // the type of every body but a module's
	}
	if req.contentType != "" {
		r.Header.Set("Content-Type", req.contentType)
	}
	before := a.stored(t)
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(r)
	if err != nil {
		if strings.Contains(err.Error(), "invalid header field") || strings.Contains(err.Error(), "invalid method") {
			return // not a request a client can send
		}
		t.Fatalf("%s %s: %v", rt.method, target, err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: %d, and the answer does not read: %v", rt.method, target, resp.StatusCode, err)
	}
	if resp.StatusCode < 400 {
		return
	}
	var refusal api.ErrorResponse
	if err := json.Unmarshal(answer, &refusal); err != nil || refusal.Error == "" || resp.StatusCode >= 500 {
		t.Fatalf("%s %s: %d %s; want a refusal under 500 with an ErrorResponse (%v)", rt.method, target, resp.StatusCode, answer, err)
	}
	if after := a.stored(t); after != before {
		t.Fatalf("%s %s: refused with %d %s, yet the host went from %s to %s", rt.method, target, resp.StatusCode, refusal.Error, before, after)
	}
}

// stored describes how many instances and modules the host has.
func (a *fuzzAPI) stored(t *testing.T) string {
	ctx := context.Background()
	counts, err := a.h.Count(ctx, store.InstanceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	modules, err := a.h.Modules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	instances := 0
	for _, c := range counts {
		instances += c.Count
	}
	return fmt.Sprintf("%d instances and %d modules", instances, len(modules))
}
