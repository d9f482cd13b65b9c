package host_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/host/server"
)

var (
	specOnce   sync.Once
	spec       *openapi3.T
	specRouter routers.Router
	specErr    error
)

// openAPI returns host/server/openapi.json, checked as an OpenAPI 3 document,
// and a router of its operations on any server.
func openAPI(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	specOnce.Do(func() {
		data, err := os.ReadFile("server/openapi.json")
		if err != nil {
			specErr = err
			return
		}
		if spec, specErr = openapi3.NewLoader().LoadFromData(data); specErr != nil {
			return
		}
		if specErr = spec.Validate(context.Background()); specErr != nil {
			return
		}
		// Requests in tests go to whatever server httptest picks.
		spec.Servers = nil
		specRouter, specErr = legacy.NewRouter(spec)
	})
	if specErr != nil {
		t.Fatalf("openapi.json: %v", specErr)
	}
	return spec, specRouter
}

// TestOpenAPIDescribesEveryRoute checks that the document describes
// exactly the routes the handler registers, each with the token it needs,
// and that the handler serves the document.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	doc, _ := openAPI(t)
	var described, served []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			token, _ := op.Extensions["x-durabox-token"].(string)
			if token == "none" {
				token = "public"
			}
			described = append(described, method+" "+path+" "+token)
		}
	}
	for _, rt := range server.Routes() {
		served = append(served, rt.Method+" "+rt.Path+" "+rt.Access)
	}
	slices.Sort(described)
	slices.Sort(served)
	for _, d := range described {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.json describes %s; the handler serves no such route (with that token)", d)
		}
	}
	for _, s := range served {
		if !slices.Contains(described, s) {
			t.Errorf("the handler serves %s; openapi.json does not describe it (with that token)", s)
		}
	}
	rec := httptest.NewRecorder()
	fakehost.New(orchestrations).Handler(server.Options{Token: adminToken}).ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/openapi.json", nil))
	want, _ := os.ReadFile("server/openapi.json")
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want) || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("GET /v1/openapi.json without a token: %d %s, %.100s; want 200 and the document", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

// checkAgainstOpenAPI checks an answer of the handler against the
// document: its status must be one the operation lists, and its body must
// fit the schema of that status. Answers for paths or methods the document
// does not have are left alone (TestHandler checks them).
func checkAgainstOpenAPI(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	_, router := openAPI(t)
	route, params, err := router.FindRoute(req)
	if err != nil {
		return
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(strings.NewReader(rec.Body.String())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		t.Errorf("the answer does not fit openapi.json (%s %s, %d):\n%v", route.Method, route.Path, rec.Code, err)
	}
}
