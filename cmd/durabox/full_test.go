package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/logbuf"
	"github.com/durabox/durabox/internal/smalldisk"
	"github.com/durabox/durabox/internal/testhost"
)

// TestFullDisk: a host whose SQLite file is on a disk that fills refuses
// new work with 503 and says why, reports not ready, keeps every
// acknowledged start, and once there is space again is ready and runs
// every instance to its end: none fails for the disk.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	disk := smalldisk.Mount(t, 32<<20)
	hello, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	log := &logbuf.Buffer{}
	h := testhost.At(t, filepath.Join(disk, "durabox.db"), host.Options{CacheDir: t.TempDir(), OrchestrationWorkers: workers, Logger: slog.New(slog.NewTextHandler(log, nil))}, hello)
	handler, err := server.New(h, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var acked []string
	start := func(id string) (int, string) {
		code, body := call("POST", "/v1/instances", fmt.Sprintf(`{"name": "Greeting", "input": "world", "id": %q}`, id))
		if code == http.StatusCreated {
			acked = append(acked, id)
		}
		return code, body
	}
	for i := range 5 {
		if code, body := start(fmt.Sprintf("before-%d", i)); code != http.StatusCreated {
			t.Fatalf("start: %d %s", code, body)
		}
	}

	free := smalldisk.Fill(t, disk)
	// Starts succeed while the WAL has room it had; then they are refused.
	var code int
	var body string
	for i := 0; i < 1000; i++ {
		if code, body = start(fmt.Sprintf("full-%d", i)); code != http.StatusCreated {
			break
		}
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "the disk holding the database is full") || !strings.Contains(body, "free space on it, and writes succeed again") {
		t.Fatalf("a start on a full disk: %d %s; want 503 saying the disk is full", code, body)
	}
	if code, body := call("GET", "/readyz", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "the disk holding the database is full") {
		t.Fatalf("readyz on a full disk: %d %s; want 503 saying the disk is full", code, body)
	}

	// The host tries the turns of the instances the disk took, fails to
	// commit them, and waits for space: it takes no turn again before
	// there is space, where taking one counts a delivery of it whenever
	// that small write fits in the room the WAL has, and a turn delivered
	// 8 times fails its instance as poison (which one delivered 5 times
	// in as many milliseconds nearly was, before the host waited).
	// Where the room the WAL had took every turn left, the store refuses
	// the fetchers' leases, the refused start having found the disk full,
	// and the host waits all the same (a host that took that refusal for
	// a passing failure fetched every second, and never ran the
	// instances that waited for a fetch: CI found some unfinished 3
	// minutes on).
	unfinished := func() int {
		n := 0
		for _, id := range acked {
			inst, err := h.Instance(ctx, id)
			if err != nil {
				t.Fatalf("read %s on a full disk: %v; the host's log:\n%s", id, err, log)
			}
			if !inst.Status.IsTerminal() {
				n++
			}
		}
		return n
	}
	atFull := unfinished()
	notCommitted := regexp.MustCompile(`turn not committed; it will run again" instance=(\S+)`)
	for strings.Count(log.String(), "host: waiting for the disk to take writes again: sqlite: the disk holding the database is full") < 3 {
		if ctx.Err() != nil {
			t.Fatalf("the host did not wait for space:\n%s", log)
		}
		counts := map[string]int{}
		for _, m := range notCommitted.FindAllStringSubmatch(log.String(), -1) {
			if counts[m[1]]++; counts[m[1]] > 1 {
				t.Fatalf("the host took the turn of %s again on a full disk, and did not wait for space:\n%s", m[1], log)
			}
		}
		time.Sleep(10 * time.Millisecond) // a poll of the log: it decides nothing
	}
	free()
	if code, body := call("GET", "/readyz", ""); code != http.StatusOK {
		t.Fatalf("readyz once there is space: %d %s", code, body)
	}
	if code, body := start("after"); code != http.StatusCreated {
		t.Fatalf("a start once there is space: %d %s", code, body)
	}
	for _, id := range acked {
		inst, err := h.Wait(ctx, id)
		if err != nil || inst.Status != engine.StatusCompleted || string(inst.Result) != `"Hello, world!"` {
			t.Fatalf("%s: %+v, %v; want Completed with Hello, world!", id, inst, err)
		}
	}
	t.Logf("%d starts acknowledged (%d of them unfinished when the disk filled), every one completed", len(acked), atFull)
}

// TestFullDiskUnderTheCacheAndTheLog: a real durabox serve whose compiled
// module cache (--cache-dir) and log (its stderr) are on a full disk, with
// its database elsewhere, deploys a module and runs it to its end: a cache
// that cannot keep what was compiled costs a compile, a log that cannot be
// written loses its lines, and neither stops the host or refuses a module.
func TestFullDiskUnderTheCacheAndTheLog(t *testing.T) {
	t.Parallel()
	disk := smalldisk.Mount(t, 1<<20)
	logFile, err := os.Create(filepath.Join(disk, "durabox.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	smalldisk.Fill(t, disk)
	addr := freeLoopback(t)
	cmd := exec.Command(binary(t), "serve", "--db", filepath.Join(t.TempDir(), "durabox.db"), "--addr", addr, "--cache-dir", filepath.Join(disk, "cache"), "--log-level", "debug")
	cmd.Env, cmd.Stdout, cmd.Stderr = withoutToken(), logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c := client.New("http://"+addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for c.Ready(ctx) != nil {
		if ctx.Err() != nil {
			t.Fatal("durabox serve, its cache and its log on a full disk, was not ready within 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
	deployExample(t, c, "hello")
	id, err := c.Start(ctx, api.StartRequest{Name: "Greeting", Input: json.RawMessage(`"full disk"`)})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := c.Wait(ctx, id)
	if err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("the instance: %+v, %v; want it Completed", inst, err)
	}
}

// freeLoopback returns a loopback address nothing listens on now, for a
// serve whose output cannot be read to learn the port it took.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
