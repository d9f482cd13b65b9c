package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/host"
)

// attackerPage is a page of another origin that tries, in the browser of
// someone who runs a host on loopback without a token, to start an
// instance and to deploy a module (in every way a page can send a request
// without the host's consent: fetch with a text/plain body, fetch with a
// JSON body in no-cors mode, a multipart form, an HTML form), and to read
// the instances. run() returns what the page could see of each.
const attackerPage = `<!doctype html>
<title>another origin</title>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" action="HOST/v1/instances" enctype="text/plain" target="sink">
<input name='{"name": "Greeting", "id": "web-form", "input": "' value='"}'>
</form>
<script>
const host = "HOST";
const start = id => JSON.stringify({name: "Greeting", input: "web", id});
async function attempt(results, name, f) {
  try {
    results[name] = await f();
  } catch (e) {
    results[name] = "refused by the browser: " + e.name;
  }
}
async function run() {
  const results = {};
  await attempt(results, "text/plain start", async () =>
    (await fetch(host + "/v1/instances", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: start("web-text")})).type);
  await attempt(results, "JSON start in no-cors mode", async () =>
    (await fetch(host + "/v1/instances", {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/json"}, body: start("web-json")})).type);
  await attempt(results, "JSON start", async () =>
    (await fetch(host + "/v1/instances", {method: "POST", headers: {"Content-Type": "application/json"}, body: start("web-cors")})).status);
  await attempt(results, "form-data deploy", async () => {
    const form = new FormData();
    form.append("module", await (await fetch("/module.wasm")).blob(), "module.wasm");
    form.append("env", "STOLEN=1");
    return (await fetch(host + "/v1/modules", {method: "POST", mode: "no-cors", body: form})).type;
  });
  await attempt(results, "read", async () => await (await fetch(host + "/v1/instances")).text());
  await attempt(results, "read in no-cors mode", async () => {
    const r = await fetch(host + "/v1/instances", {mode: "no-cors"});
    return r.type + " " + JSON.stringify(await r.text());
  });
  await new Promise(done => {
    document.getElementById("sink").onload = done;
    document.getElementById("form").submit();
  });
  return results;
}
</script>
`

// seen records the requests a handler answers, as "METHOD PATH STATUS".
type seen struct {
	mu       sync.Mutex
	requests []string
}

func (s *seen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path+" "+strconv.Itoa(rec.status))
	})
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// TestWebPageInChromiumCannotDriveTheHost opens, in a real headless
// Chromium, a page of another origin (attacker.example, which the browser
// resolves to this machine) that tries everything a page can send a host
// on loopback without a token: the host sees each request and refuses it,
// nothing is deployed or started, and the page reads nothing. Then it
// plays DNS rebinding: a page at attacker.example on the host's own port
// (the attacker's name now pointing at the host) reads its own origin,
// and is refused too.
func TestWebPageInChromiumCannotDriveTheHost(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, chromedp.Flag("host-resolver-rules", "MAP attacker.example 127.0.0.1"))
	h := startHost(t, host.Options{})
	hello := h.deploy(t, "examples/wasm/hello")
	if _, err := h.Start(context.Background(), "Greeting", []byte(`"secret"`), "secret"); err != nil {
		t.Fatal(err)
	}
	approval := wasmOf(t, "examples/wasm/approval")
	var log seen
	hostSrv := serveAPI(t, h, log.wrap)
	page := strings.ReplaceAll(attackerPage, "HOST", hostSrv.URL)
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(page))
		case "/module.wasm":
			w.Write(approval)
		default:
			http.NotFound(w, r)
		}
	}))
	defer pageSrv.Close()

	b.do("open the page of another origin", chromedp.Navigate("http://attacker.example:"+port(pageSrv.URL)+"/"))
	results, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]any]("run()", chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run the page's attempts: %v\nthe page shows:\n%s", err, b.pageText())
	}
	t.Logf("what the page saw: %v", results)
	for name, want := range map[string]string{
		"JSON start":           "refused by the browser: TypeError",
		"read":                 "refused by the browser: TypeError",
		"read in no-cors mode": `opaque ""`,
	} {
		if got := fmt.Sprint(results[name]); got != want {
			t.Errorf("the page's %s: %s; want %s", name, got, want)
		}
	}
	want := []string{
		"POST /v1/instances 403",    // text/plain
		"POST /v1/instances 403",    // JSON in no-cors mode
		"OPTIONS /v1/instances 405", // JSON's preflight, which the browser stops at
		"POST /v1/modules 403",      // form-data
		"GET /v1/instances 200",     // the read, which the browser does not show the page
		"GET /v1/instances 200",     // the read in no-cors mode, likewise
		"POST /v1/instances 403",    // the HTML form
	}
	if got := log.list(); !slices.Equal(got, want) {
		t.Errorf("the host answered\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantStored(t, h, hello.Hash, "secret")

	rebound := "http://attacker.example:" + port(hostSrv.URL)
	b.do("open the host by the attacker's name", chromedp.Navigate(rebound+"/"))
	read, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`fetch("/v1/instances").then(async r => r.status + " " + await r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the instances at %s: %v", rebound, err)
	}
	if !strings.HasPrefix(read, "421 ") || strings.Contains(read, "secret") {
		t.Errorf("a page at %s read its own origin's /v1/instances: %s; want 421 and no instance", rebound, read)
	}
}
