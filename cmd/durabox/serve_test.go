package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// Not parallel: its cases run in a directory of their own (t.Chdir).
func TestServeUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no --db", []string{"serve"}, "durabox serve: --db FILE is required\n"},
		{"an unknown durability", []string{"serve", "--db", "x.db", "--durability", "fast"}, "durabox serve: --durability is \"fast\"; it must be full or normal\n"},
		{"an unknown runtime", []string{"serve", "--db", "x.db", "--runtime", "v8"}, "durabox serve: --runtime is \"v8\"; it must be wazero or wasmtime\n"},
		{"an argument", []string{"serve", "--db", "x.db", "now"}, "durabox serve: unexpected argument \"now\"\n"},
		{"--json", []string{"serve", "--db", "x.db", "--json"}, "durabox serve: flag provided but not defined: --json\n"},
		{"more memory than wasm addresses", []string{"serve", "--db", "x.db", "--memory-mib", "4097"}, "durabox serve: invalid value \"4097\" for flag --memory-mib: it must be 0 or a whole number from 16 to 4096 (0 for the default, 256; a Go guest needs 16 MiB, and a wasm instance addresses at most 4096)\n"},
		{"memory that overflows in bytes", []string{"serve", "--db", "x.db", "--memory-mib", "17592186044416"}, "durabox serve: invalid value \"17592186044416\" for flag --memory-mib: it must be 0 or a whole number from 16 to 4096 (0 for the default, 256; a Go guest needs 16 MiB, and a wasm instance addresses at most 4096)\n"},
		{"memory past uint64", []string{"serve", "--db", "x.db", "--memory-mib", "18446744073709551616"}, "durabox serve: invalid value \"18446744073709551616\" for flag --memory-mib: it must be 0 or a whole number from 16 to 4096 (0 for the default, 256; a Go guest needs 16 MiB, and a wasm instance addresses at most 4096)\n"},
		{"a step timeout past int64", []string{"serve", "--db", "x.db", "--step-timeout", "9999999999h"}, "durabox serve: invalid value \"9999999999h\" for flag --step-timeout: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0 for the default, 5s)\n"},
		{"a negative activity timeout", []string{"serve", "--db", "x.db", "--activity-timeout", "-1s"}, "durabox serve: invalid value \"-1s\" for flag --activity-timeout: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0 for the default, 5m)\n"},
		{"a payload limit past 1 GiB", []string{"serve", "--db", "x.db", "--max-payload-mib", "1025"}, "durabox serve: invalid value \"1025\" for flag --max-payload-mib: it must be a whole number from 0 to 1024 (0 for the default, 16)\n"},
		{"a log format", []string{"serve", "--db", "x.db", "--log-format", "xml"}, "durabox serve: --log-format is \"xml\"; it must be text or json\n"},
		{"a log level", []string{"serve", "--db", "x.db", "--log-level", "loud"}, "durabox serve: --log-level is \"loud\"; it must be debug, info, warn or error\n"},
		{"a certificate without its key", []string{"serve", "--db", "x.db", "--tls-cert", "c.pem"}, "durabox serve: --tls-cert and --tls-key go together: give both, or neither\n"},
		{"a cache past 16 EiB", []string{"serve", "--db", "x.db", "--cache-mib", "17592186044416"}, "durabox serve: invalid value \"17592186044416\" for flag --cache-mib: it must be a whole number from 0 to 17592186044415 (0 for the default, a quarter of the machine's memory; the most is 16 EiB in bytes)\n"},
		{"a negative history warning", []string{"serve", "--db", "x.db", "--history-warning", "-1"}, "durabox serve: invalid value \"-1\" for flag --history-warning: it must be a whole number, 0 or more (0 for the default, 50000)\n"},
		{"a negative retention", []string{"serve", "--db", "x.db", "--retention", "-1h"}, "durabox serve: invalid value \"-1h\" for flag --retention: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0, the default, keeps everything)\n"},
		{"a negative sweep interval", []string{"serve", "--db", "x.db", "--retention", "1h", "--sweep-interval", "-1m"}, "durabox serve: invalid value \"-1m\" for flag --sweep-interval: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0 for the default, a tenth of the retention, between a minute and an hour)\n"},
		{"a sweep interval without retention", []string{"serve", "--db", "x.db", "--sweep-interval", "1m"}, "durabox serve: --sweep-interval applies --retention; give --retention too\n"},
		{"a host id for a SQLite file", []string{"serve", "--db", "x.db", "--host-id", "a"}, "durabox serve: --host-id names one of several hosts sharing a PostgreSQL database; a SQLite file has one host\n"},
		{"a durability on PostgreSQL", []string{"serve", "--db", "postgres://x@127.0.0.1/x", "--durability", "normal"}, "durabox serve: --durability is for a SQLite file; on PostgreSQL, the server's synchronous_commit decides what a commit waits for\n"},
		{"a negative lease", []string{"serve", "--db", "x.db", "--lease", "-1s"}, "durabox serve: invalid value \"-1s\" for flag --lease: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0 for the default, 1m)\n"},
		{"memory a Go guest cannot start in", []string{"serve", "--db", "x.db", "--memory-mib", "8"}, "durabox serve: invalid value \"8\" for flag --memory-mib: it must be 0 or a whole number from 16 to 4096 (0 for the default, 256; a Go guest needs 16 MiB, and a wasm instance addresses at most 4096)\n"},
		{"a negative scratch limit", []string{"serve", "--db", "x.db", "--scratch-mib", "-1"}, "durabox serve: invalid value \"-1\" for flag --scratch-mib: it must be a whole number from 0 to 8796093022207 (0 gives activities no scratch directory)\n"},
		{"a negative memory", []string{"serve", "--db", "x.db", "--memory-mib", "-1"}, "durabox serve: invalid value \"-1\" for flag --memory-mib: it must be 0 or a whole number from 16 to 4096 (0 for the default, 256; a Go guest needs 16 MiB, and a wasm instance addresses at most 4096)\n"},
		{"a negative step budget", []string{"serve", "--db", "x.db", "--step-budget", "-1"}, "durabox serve: invalid value \"-1\" for flag --step-budget: it must be a whole number, 0 or more (0, the default, sets no budget)\n"},
		{"a negative cache", []string{"serve", "--db", "x.db", "--cache-mib", "-64"}, "durabox serve: invalid value \"-64\" for flag --cache-mib: it must be a whole number from 0 to 17592186044415 (0 for the default, a quarter of the machine's memory; the most is 16 EiB in bytes)\n"},
		{"a negative payload limit", []string{"serve", "--db", "x.db", "--max-payload-mib", "-1"}, "durabox serve: invalid value \"-1\" for flag --max-payload-mib: it must be a whole number from 0 to 1024 (0 for the default, 16)\n"},
		{"a lease that is not a duration", []string{"serve", "--db", "x.db", "--lease", "30"}, "durabox serve: invalid value \"30\" for flag --lease: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0 for the default, 1m)\n"},
		{"a negative step timeout", []string{"serve", "--db", "x.db", "--step-timeout", "-5s"}, "durabox serve: invalid value \"-5s\" for flag --step-timeout: it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0 for the default, 5s)\n"},
		{"an OTLP endpoint without a scheme", []string{"serve", "--db", "x.db", "--otlp-endpoint", "collector:4318"}, "durabox serve: --otlp-endpoint (or $OTEL_EXPORTER_OTLP_ENDPOINT): \"collector:4318\" is not the base URL of an OTLP/HTTP collector; give one such as http://127.0.0.1:4318\n"},
		{"a token file that is not there", []string{"serve", "--db", "x.db", "--token-file", "nope"}, "durabox serve: --token-file: open nope: no such file or directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := durabox(tt.args...)
			if want := tt.wantStderr + "\n" + usage(t, "serve"); code != 2 || stdout != "" || stderr != want {
				t.Errorf("got exit code %d, stdout %q, stderr:\n%s\nwant exit code 2, stderr:\n%s", code, stdout, stderr, want)
			}
			if _, err := os.Stat("x.db"); !os.IsNotExist(err) {
				t.Errorf("x.db was created")
			}
		})
	}
}

// TestServe runs a real host on a new SQLite file, talks to it, and stops
// it with SIGINT.
//
// Not parallel: it stops its serve with SIGINT to this process, which
// every serve this process ran would take.
func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "durabox.db")
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run([]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--durability", "normal", "--cache-mib", "64"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var stderr []string
	serving := regexp.MustCompile(`^durabox: serving on http://(127\.0\.0\.1:\d+) \(db (.*)\)$`)
	var addr string
	for addr == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited with %d before it served:\n%s", <-exit, strings.Join(stderr, "\n"))
			}
			stderr = append(stderr, line)
			if m := serving.FindStringSubmatch(line); m != nil {
				if m[2] != db {
					t.Errorf("serving line %q names db %q, want %q", line, m[2], db)
				}
				addr = m[1]
			}
		case <-time.After(time.Minute):
			t.Fatalf("serve did not say where it serves within a minute:\n%s", strings.Join(stderr, "\n"))
		}
	}

	ctx := context.Background()
	c := client.New("http://"+addr, nil)
	if page, err := c.List(ctx, client.ListRequest{}); err != nil || len(page.Instances) != 0 {
		t.Errorf("List = %v, %v; want no instances", page, err)
	}
	if _, err := c.Instance(ctx, "nope"); err == nil || err.Error() != `durabox: get instance: instance not found: "nope"` {
		t.Errorf("Instance(nope) = %v, want instance not found", err)
	}
	deployExample(t, c, "hello") // a commit, for the store's metrics
	checkObservable(t, "http://"+addr)
	if body := getBody(t, "http://"+addr+"/metrics"); !strings.Contains(body, "\ndurabox_live_memory_limit_bytes 6.7108864e+07\n") {
		t.Errorf("with --cache-mib 64, GET /metrics does not show the live cache bound at 64 MiB:\n%s", body)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for line := range lines {
		stderr = append(stderr, line)
	}
	if code := <-exit; code != 0 {
		t.Errorf("serve exited with %d after SIGINT, want 0:\n%s", code, strings.Join(stderr, "\n"))
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no database: %v", err)
	}
	if want := "durabox: the dashboard is at http://" + addr + "/"; !slices.Contains(stderr, want) {
		t.Errorf("serve did not say %q:\n%s", want, strings.Join(stderr, "\n"))
	}
}

// getBody returns the body of a GET of url.
func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// checkObservable checks what serve serves beside the API: the health
// checks, the dashboard, and metrics that the store reports its commits
// to (the caller has made some).
func checkObservable(t *testing.T, base string) {
	t.Helper()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz"); code != 200 || body != `{"status":"ok"}`+"\n" {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
	// The host is ready once it has loaded the modules its work needs:
	// none here, so at once, but Run may not have begun yet.
	deadline := time.Now().Add(time.Minute)
	for code, body := get("/readyz"); code != 200; code, body = get("/readyz") {
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz: still %d %s after a minute", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "<title>Durabox</title>") {
		t.Errorf("GET /: %d %.200s", code, body)
	}
	code, body := get("/metrics")
	m := regexp.MustCompile(`(?m)^durabox_store_commit_writes_count (\d+)$`).FindStringSubmatch(body)
	if code != 200 || m == nil || m[1] == "0" {
		t.Errorf("GET /metrics: %d; want the store's commits counted:\n%s", code, body)
	}
}

// TestServeRefusesWhatItCannotKeep: serve refuses to listen beyond
// loopback without a token, and a port that is taken; either way it
// creates nothing, no database, no lock, no cache.
func TestServeRefusesWhatItCannotKeep(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name, addr string
		flags      []string
		want       string
	}{
		{"beyond loopback without a token", "0.0.0.0:0", nil, "durabox: serve: --addr 0.0.0.0:0 listens beyond loopback, where anyone who reaches it could deploy code and read every instance; " +
			"give a token with --token-file FILE or $DURABOX_TOKEN (and TLS with --tls-cert and --tls-key), or listen on 127.0.0.1"},
		{"a port that is taken", taken.Addr().String(), nil, "bind: address already in use"},
		{"an allowed host that is a URL", "127.0.0.1:0", []string{"--allowed-hosts", "ok.example,https://durabox.example.com"},
			`durabox: serve: host: the allowed host "https://durabox.example.com" is not a host name or address, alone or with a port, such as durabox.example.com or durabox.example.com:8443`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(binary(t), append([]string{"serve", "--db", filepath.Join(dir, "x.db"), "--addr", tt.addr}, tt.flags...)...)
			cmd.Env = withoutToken()
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), tt.want) {
				t.Errorf("serve: %v\n%s\nwant exit code 1 and %q", err, out, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("serve left %v behind", entries)
			}
		})
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// in dir, and returns their paths.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "durabox test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return cert, key
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeBeyondLoopback runs serve on every interface with an admin
// token, a read-only token and TLS, logging JSON, and talks to it with the
// command line as people would: tokens and certificates from files and
// the environment.
//
// Not parallel: it sets $DURABOX_TOKEN (t.Setenv).
func TestServeBeyondLoopback(t *testing.T) {
	const (
		adminToken = "admin-0123456789abcdef0123456789"
		readToken  = "read-0123456789abcdef0123456789"
	)
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	adminFile, readFile := filepath.Join(dir, "admin.token"), filepath.Join(dir, "read.token")
	writeFile(t, adminFile, []byte(adminToken+"\n"))
	writeFile(t, readFile, []byte(readToken+"\n"))
	db := filepath.Join(dir, "durabox.db")
	s := startServerAt(t, db, "0.0.0.0:0", "--token-file", adminFile, "--read-token-file", readFile,
		"--tls-cert", cert, "--tls-key", key, "--log-format", "json")
	host, port, _ := net.SplitHostPort(s.addr)
	if host != "0.0.0.0" {
		t.Errorf("serve says it serves on %s; want the host --addr gave, 0.0.0.0, with its port", s.addr)
	}
	addr := "https://127.0.0.1:" + port
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "hello.wasm"), wasm)

	t.Setenv("DURABOX_TOKEN", "")
	tests := []struct {
		name     string
		env      string
		args     []string
		wantCode int
		// want is in stdout for success, in stderr for a failure.
		want string
	}{
		{"no token", "", []string{"list"}, 1, `durabox: list instances: unauthorized: this host asks for a token`},
		{"the wrong token", "wrong-0123456789abcdef", []string{"list"}, 1, "durabox: list instances: unauthorized: the token is not one this host accepts"},
		{"no authority for the certificate", adminToken, []string{"list", "--tls-ca", ""}, 1, "pass its CA with --tls-ca FILE"},
		{"the admin token from the environment deploys", adminToken, []string{"deploy", filepath.Join(dir, "hello.wasm"), "--env", "SECRET=topsecret-value"}, 0, "env: SECRET"},
		{"the read-only token lists", "", []string{"list", "--token-file", readFile}, 0, "no instances"},
		{"the read-only token does not start", "", []string{"start", "Greeting", "--token-file", readFile}, 1,
			"durabox: start: forbidden: this token may only read (GET); POST /v1/instances needs the admin token"},
		{"the admin token from a file starts", "", []string{"start", "Greeting", "--input", `"tls"`, "--wait", "--token-file", adminFile}, 0, `"Hello, tls!"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DURABOX_TOKEN", tt.env)
			args := append([]string{tt.args[0], "--addr", addr, "--tls-ca", cert}, tt.args[1:]...)
			code, stdout, stderr := durabox(args...)
			out := stdout
			if tt.wantCode != 0 {
				out = stderr
			}
			if code != tt.wantCode || !strings.Contains(out, tt.want) {
				t.Errorf("exit code %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, tt.wantCode, tt.want)
			}
		})
	}

	log := s.output()
	for _, want := range []string{`"msg":"request refused","method":"GET","path":"/v1/instances"`, `"why":"host: forbidden: this token may only read`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not show the refusals (%s):\n%s", want, log)
		}
	}
	for _, secret := range []string{adminToken, readToken, "topsecret-value"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log shows a secret, %q:\n%s", secret, log)
		}
	}
	var requests []string
	for _, line := range strings.Split(log, "\n") {
		var entry struct{ Level, Msg, Method, Path string }
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "request" && entry.Level == "INFO" {
			requests = append(requests, entry.Method+" "+entry.Path)
		}
	}
	// The log has no line at info level for each request (a host under
	// load answers hundreds a second): those are at debug level, and only
	// a failure (5xx) or a slow request has one, at warn.
	if len(requests) > 0 {
		t.Errorf("at info level the log has a line for each of %q:\n%s", requests, log)
	}
	for name, mode := range map[string]os.FileMode{db: 0o600, db + "-wal": 0o600, db + ".lock": 0o600, db + ".wasmcache": 0o700 | os.ModeDir} {
		if fi, err := os.Stat(name); err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", filepath.Base(name), fi.Mode(), err, mode)
		}
	}
}

// TestServeLogsGuestLevels runs serve with --log-level warn and a Retry
// that runs out of attempts: its activity's warnings and its
// orchestration's error are in the log, at their levels and tagged with
// the instance, its execution, and the activity and its attempt; the
// guest's info lines are not.
func TestServeLogsGuestLevels(t *testing.T) {
	t.Parallel()
	s := startServerAt(t, filepath.Join(t.TempDir(), "durabox.db"), "127.0.0.1:0", "--log-level", "warn")
	c := s.client()
	deployExample(t, c, "retry")
	ctx := context.Background()
	id, err := c.Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"attempts": 2, "failures": 2, "delay": "10ms"}`), ID: "gives-up"})
	if err != nil {
		t.Fatal(err)
	}
	if inst, err := c.Wait(ctx, id); err != nil || inst.Status != engine.StatusFailed {
		t.Fatalf("Retry: %+v, %v", inst, err)
	}
	s.stop(t, syscall.SIGTERM)
	log := s.output()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^time=\S+ level=WARN msg="guest: FlakyTask fails on purpose attempt=1" module=[0-9a-f]{12} instance=gives-up execution=1 activity=FlakyTask scheduleId=2 attempt=1$`),
		regexp.MustCompile(`(?m)^time=\S+ level=WARN msg="guest: FlakyTask fails on purpose attempt=2" module=[0-9a-f]{12} instance=gives-up execution=1 activity=FlakyTask scheduleId=6 attempt=1$`),
		regexp.MustCompile(`(?m)^time=\S+ level=ERROR msg="guest: all attempts failed attempts=2" instance=gives-up execution=1$`),
	} {
		if !want.MatchString(log) {
			t.Errorf("no line matches %s in the log at warn:\n%s", want, log)
		}
	}
	if strings.Contains(log, "level=INFO") {
		t.Errorf("a log at warn has lines at info:\n%s", log)
	}
}

// TestServeLogsJSON runs serve with --log-format json, as a log shipper
// would read it: every line it prints is a JSON object, from the first,
// which says where it serves; an activity's output carries the instance,
// the activity and its schedule id; a second serve refused on the same
// file says why in JSON too.
func TestServeLogsJSON(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	s := startServerAt(t, db, "127.0.0.1:0", "--log-format", "json")
	c := s.client()
	deployExample(t, c, "retry")
	ctx := context.Background()
	id, err := c.Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"failures": 0}`), ID: "flaky-1"})
	if err != nil {
		t.Fatal(err)
	}
	if inst, err := c.Wait(ctx, id); err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("Retry: %+v, %v", inst, err)
	}
	refused, _ := exec.Command(binary(t), "serve", "--db", db, "--addr", "127.0.0.1:0", "--log-format", "json").CombinedOutput()
	s.stop(t, syscall.SIGTERM)

	type record struct {
		Level, Msg, URL, DB, Dashboard, Instance, Activity, Err string
		ScheduleID                                              int64
	}
	var records []record
	for i, line := range strings.Split(strings.TrimSuffix(s.output(), "\n"), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("line %d of serve's output is not JSON (%v):\n%s", i+1, err, line)
		}
		records = append(records, r)
	}
	if first := records[0]; first.Msg != "serving" || first.URL != "http://"+s.addr || first.DB != db || first.Dashboard != "http://"+s.addr+"/" {
		t.Errorf("the first record is %+v; want where it serves: msg serving, url http://%s, db %s, dashboard http://%s/", first, s.addr, db, s.addr)
	}
	want := record{Level: "INFO", Msg: "guest: FlakyTask attempt 1 starting (delivery 1)", Instance: id, Activity: "FlakyTask", ScheduleID: 2}
	if !slices.Contains(records, want) {
		t.Errorf("no record %+v in the log:\n%s", want, s.output())
	}
	var r record
	if err := json.Unmarshal(refused, &r); err != nil || r.Level != "ERROR" ||
		!strings.Contains(r.Err, "is in use by another durabox process (pid "+strconv.Itoa(s.cmd.Process.Pid)+")") {
		t.Errorf("the second serve, refused, said (%v):\n%s\nwant one JSON record at level ERROR naming the first serve's pid", err, refused)
	}
}
