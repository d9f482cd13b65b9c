package host_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/server"
)

// TestDashboardFiles: the handler serves the dashboard's page at / and
// each of its files at /ui/, with their types and a policy that lets them
// load nothing from elsewhere; every file the page and the modules refer
// to is there.
func TestDashboardFiles(t *testing.T) {
	t.Parallel()
	handler := fixture(t).Handler(server.Options{})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
		return rec
	}
	files, err := filepath.Glob("server/dashboard/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("the dashboard's files: %v, %v", files, err)
	}
	types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	refs := regexp.MustCompile(`(?:src|href)="/ui/([^"]+)"|from "\./([^"]+)"`)
	for _, file := range files {
		name := filepath.Base(file)
		rec := get("/ui/" + name)
		want, _ := os.ReadFile(file)
		if rec.Code != 200 || rec.Body.String() != string(want) {
			t.Errorf("GET /ui/%s: %d, %d bytes; want 200 and the file's %d", name, rec.Code, rec.Body.Len(), len(want))
		}
		if got := rec.Header().Get("Content-Type"); got != types[filepath.Ext(name)] {
			t.Errorf("GET /ui/%s: Content-Type %q, want %q", name, got, types[filepath.Ext(name)])
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET /ui/%s: Content-Security-Policy %q", name, csp)
		}
		for _, m := range refs.FindAllStringSubmatch(string(want), -1) {
			ref := m[1] + m[2]
			if _, err := os.Stat(filepath.Join("server", "dashboard", ref)); err != nil {
				t.Errorf("%s refers to %s, which the dashboard does not have", name, ref)
			}
		}
	}
	index, _ := os.ReadFile("server/dashboard/index.html")
	if rec := get("/"); rec.Code != 200 || rec.Body.String() != string(index) || rec.Header().Get("Content-Type") != types[".html"] {
		t.Errorf("GET /: %d %s; want 200 and index.html", rec.Code, rec.Header().Get("Content-Type"))
	}
}
