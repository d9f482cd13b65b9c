package host_test

import (
	"encoding/json"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/host/server"
)

// TestVersion: BuildVersion reads what the binary was built from (a test
// binary records no dependencies: the runtimes' versions are checked on
// the durabox binary, in cmd/durabox's TestVersion), and GET /v1/version
// answers what the server was given, as openapi.json describes it, to a
// token that may read.
func TestVersion(t *testing.T) {
	t.Parallel()
	v := host.BuildVersion()
	if v.Go != runtime.Version() || v.ABI != abi.Version || v.Durabox == "" {
		t.Fatalf("BuildVersion() = %+v; want this Go, and ABI %d", v, abi.Version)
	}
	v.Runtimes, v.Schemas = map[string]string{host.RuntimeWazero: "v1.2.3"}, map[string]int{"sqlite": 10}
	handler := fakehost.New(orchestrations).Handler(server.Options{Token: adminToken, ReadToken: readToken, Version: v})
	req := httptest.NewRequest("GET", "http://localhost/v1/version", nil)
	req.Header.Set("Authorization", "Bearer "+readToken)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	checkAgainstOpenAPI(t, req, rec)
	var got api.Version
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != 200 || err != nil || got.Go != v.Go || got.Schemas["sqlite"] != 10 || got.Runtimes[host.RuntimeWazero] != v.Runtimes[host.RuntimeWazero] {
		t.Fatalf("GET /v1/version: %d %s (%v); want 200 and %+v", rec.Code, rec.Body, err, v)
	}
}
