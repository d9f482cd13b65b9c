package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// probe is a request sent to a durabox serve process, with curl and with
// net/http.
type probe struct {
	name, method, path string
	header             map[string]string
	// file, if set, is the body: the file's bytes, or with form, a
	// multipart/form-data body with the file as its "module".
	file       string
	form       bool
	wantStatus int
	// want is in the answer's body.
	want string
}

// curl sends p to base with curl, and returns the status and body.
func (p probe) curl(t *testing.T, curl, base string) (int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "body")
	args := []string{"-sS", "-o", out, "-w", "%{http_code}", "-X", p.method}
	for name, v := range p.header {
		args = append(args, "-H", name+": "+v)
	}
	switch {
	case p.form:
		args = append(args, "-F", "module=@"+p.file)
	case p.file != "":
		args = append(args, "--data-binary", "@"+p.file)
	}
	status, err := exec.Command(curl, append(args, base+p.path)...).Output()
	if err != nil {
		t.Fatalf("%s: curl: %v", p.name, err)
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	code := 0
	json.Unmarshal(status, &code)
	return code, string(body)
}

// send sends p to base with net/http, and returns the status and body.
func (p probe) send(t *testing.T, base string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	contentType := ""
	if p.file != "" {
		data, err := os.ReadFile(p.file)
		if err != nil {
			t.Fatal(err)
		}
		body.Write(data)
	}
	if p.form {
		data := body.Bytes()
		body = bytes.Buffer{}
		mw := multipart.NewWriter(&body)
		part, _ := mw.CreateFormFile("module", filepath.Base(p.file))
		part.Write(data)
		mw.Close()
		contentType = mw.FormDataContentType()
	}
	req, err := http.NewRequest(p.method, base+p.path, &body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for name, v := range p.header {
		req.Header.Set(name, v)
	}
	req.Host = req.Header.Get("Host")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// curlPath returns the path of curl, or "" when there is none and the
// test may go without (not under $DURABOX_REQUIRE_BROWSER=1, as in CI).
func curlPath(t *testing.T) string {
	path, err := exec.LookPath("curl")
	if err == nil {
		return path
	}
	if os.Getenv("DURABOX_REQUIRE_BROWSER") == "1" {
		t.Fatal("no curl to send the requests a web page could: install it (apt-get install -y curl); $DURABOX_REQUIRE_BROWSER=1 requires it")
	}
	t.Log("no curl: the requests are sent with net/http only")
	return ""
}

// checkProbes sends each probe to base, with curl (if given) and with
// net/http, and checks the answers.
func checkProbes(t *testing.T, curl, base string, probes []probe) {
	t.Helper()
	for _, p := range probes {
		answers := map[string]func() (int, string){"net/http": func() (int, string) { return p.send(t, base) }}
		if curl != "" {
			answers["curl"] = func() (int, string) { return p.curl(t, curl, base) }
		}
		for by, answer := range answers {
			if status, body := answer(); status != p.wantStatus || !strings.Contains(body, p.want) {
				t.Errorf("%s, with %s: %d %s; want %d and %q", p.name, by, status, body, p.wantStatus, p.want)
			}
		}
	}
}

// TestServeRefusesWebPages sends a durabox serve process on loopback
// without a token, with curl and with net/http, the requests a web page
// of another origin could make a browser send, and those after DNS
// rebinding: each is refused and nothing is stored, while the command
// line, the dashboard's own origin, the loopback names and probes are
// served; then a host behind a proxy answers to the names
// --allowed-hosts gives.
func TestServeRefusesWebPages(t *testing.T) {
	t.Parallel()
	curl := curlPath(t)
	dir := t.TempDir()
	s := startServer(t, filepath.Join(dir, "durabox.db"))
	c := s.client()
	deployExample(t, c, "hello")
	wasm, err := guestbuild.Wasm("examples/wasm/approval")
	if err != nil {
		t.Fatal(err)
	}
	module, start := filepath.Join(dir, "approval.wasm"), filepath.Join(dir, "start.json")
	writeFile(t, module, wasm)
	writeFile(t, start, []byte(`{"name": "Greeting", "input": "web"}`))
	_, port, _ := net.SplitHostPort(s.addr)
	const attacker = "http://attacker.example"

	checkProbes(t, curl, "http://"+s.addr, []probe{
		{name: "a text/plain start", method: "POST", path: "/v1/instances", header: map[string]string{"Content-Type": "text/plain"}, file: start,
			wantStatus: 415, want: `POST /v1/instances takes a body of type application/json, not \"text/plain\"`},
		{name: "a JSON start from another origin", method: "POST", path: "/v1/instances",
			header: map[string]string{"Content-Type": "application/json", "Origin": attacker}, file: start,
			wantStatus: 403, want: "forbidden: a web page of another origin"},
		{name: "a form-data deploy from another origin", method: "POST", path: "/v1/modules", header: map[string]string{"Origin": attacker},
			file: module, form: true, wantStatus: 403, want: "forbidden: a web page of another origin"},
		{name: "a deploy as a url-encoded form", method: "POST", path: "/v1/modules",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, file: module,
			wantStatus: 415, want: "POST /v1/modules takes a body of type application/wasm or multipart/form-data"},
		{name: "a read after DNS rebinding", method: "GET", path: "/v1/instances", header: map[string]string{"Host": "attacker.example:" + port},
			wantStatus: 421, want: `this host does not answer to \"attacker.example:` + port + `\"; it answers to 127.0.0.1:` + port},
		{name: "a read by localhost", method: "GET", path: "/v1/modules", header: map[string]string{"Host": "localhost:" + port},
			wantStatus: 200, want: `"orchestrations":["Greeting"]`},
		{name: "a probe by another name", method: "GET", path: "/readyz", header: map[string]string{"Host": "10.0.0.1:" + port},
			wantStatus: 200, want: "ready"},
	})
	ctx := context.Background()
	page, err := c.List(ctx, client.ListRequest{})
	if err != nil || len(page.Instances) != 0 {
		t.Errorf("instances %+v, %v; want none", page.Instances, err)
	}
	if mods, err := c.Modules(ctx); err != nil || len(mods) != 1 {
		t.Errorf("modules %+v, %v; want hello's only", mods, err)
	}
	// The command line is served.
	if code, stdout, stderr := durabox("start", "Greeting", "--input", `"cli"`, "--wait", "--addr", s.addr); code != 0 || !strings.Contains(stdout, "Hello, cli!") {
		t.Errorf("durabox start: exit code %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	proxied := startServerAt(t, filepath.Join(dir, "proxied.db"), "127.0.0.1:0", "--allowed-hosts", "durabox.example.com, Other.Example:8443")
	checkProbes(t, curl, "http://"+proxied.addr, []probe{
		{name: "a name given", method: "GET", path: "/v1/modules", header: map[string]string{"Host": "durabox.example.com"}, wantStatus: 200, want: `{"modules":[]}`},
		{name: "a name given, on any port", method: "GET", path: "/v1/modules", header: map[string]string{"Host": "DURABOX.example.com:443"}, wantStatus: 200, want: `{"modules":[]}`},
		{name: "a name given with its port", method: "GET", path: "/v1/modules", header: map[string]string{"Host": "other.example:8443"}, wantStatus: 200, want: `{"modules":[]}`},
		{name: "a name given, on another port", method: "GET", path: "/v1/modules", header: map[string]string{"Host": "other.example:9443"}, wantStatus: 421,
			want: "durabox.example.com, other.example:8443"},
	})
}
