package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/internal/redistest"
	"github.com/durabox/durabox/internal/testhost"
)

func TestMain(m *testing.M) {
	code := redistest.Main(m)
	pgtest.Stop()
	guestbuild.Cleanup()
	os.Exit(code)
}

// setup is a host serving its API on a local port, with the fulfil
// example deployed, a PostgreSQL schema and a Redis server of the test's.
type setup struct {
	h              *host.Host
	url, pg, redis string
	rdb            *redis.Client
	// tag makes the test's order ids its own, in a Redis that outlives it.
	tag string
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	return newSetupWith(t, server.Options{})
}

// newSetupWith is newSetup with the server's options opts.
func newSetupWith(t *testing.T, opts server.Options) *setup {
	t.Helper()
	wasm, err := guestbuild.Wasm("examples/wasm/fulfil")
	if err != nil {
		t.Fatal(err)
	}
	// A short lease, so that a worker's automatic heartbeats (every
	// third of it) tell it of a cancellation within a second.
	h := testhost.Start(t, host.Options{Lease: 3 * time.Second}, wasm)
	handler, err := server.New(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	s := &setup{h: h, url: srv.URL, pg: pgtest.Schema(t), redis: redistest.Addr(t)}
	s.rdb = redis.NewClient(&redis.Options{Addr: s.redis})
	t.Cleanup(func() { s.rdb.Close() })
	var b [4]byte
	rand.Read(b[:])
	s.tag = hex.EncodeToString(b[:])
	return s
}

// args are the worker's command line, serving queues.
func (s *setup) args(queues string, more ...string) []string {
	return append([]string{"--host", s.url, "--postgres", s.pg, "--redis", s.redis, "--queues", queues}, more...)
}

// runWorker runs the command in this process until the test ends.
func (s *setup) runWorker(t *testing.T, queues string, more ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, s.args(queues, more...), &stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v\n%s", err, stderr.String())
		}
	})
}

// start starts orchestration name with input as instance id.
func (s *setup) start(t *testing.T, name, id string, input any) {
	t.Helper()
	raw, _ := json.Marshal(input)
	if _, err := s.h.Start(context.Background(), name, raw, id); err != nil {
		t.Fatal(err)
	}
}

// finish waits for instance id to complete and returns its result.
func (s *setup) finish(t *testing.T, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := s.h.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Status != engine.StatusCompleted {
		t.Fatalf("instance %s is %s (%+v); want Completed", id, inst.Status, inst.Failure)
	}
	return string(inst.Result)
}

// TestFulfilWritesToPostgresAndRedis runs orders whose activities run in
// the worker: each order's row is in PostgreSQL and its event in the
// Redis stream, as the receipts say.
func TestFulfilWritesToPostgresAndRedis(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.runWorker(t, "orders,events")
	ids := []string{"o-1-" + s.tag, "o-2-" + s.tag, "o-3-" + s.tag}
	for i, id := range ids {
		s.start(t, "Fulfil", id, Order{ID: id, Customer: "c-42", Cents: 100 * (i + 1)})
	}
	conn, err := pgx.Connect(context.Background(), s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for i, id := range ids {
		var receipt struct {
			Row   int64  `json:"row"`
			Event string `json:"event"`
		}
		if err := json.Unmarshal([]byte(s.finish(t, id)), &receipt); err != nil {
			t.Fatal(err)
		}
		var cents int
		if err := conn.QueryRow(context.Background(), `SELECT cents FROM fulfilled_orders WHERE row_id = $1 AND order_id = $2`, receipt.Row, id).Scan(&cents); err != nil || cents != 100*(i+1) {
			t.Fatalf("order %s: row %d in PostgreSQL has cents %d (%v); want %d", id, receipt.Row, cents, err, 100*(i+1))
		}
		entries, err := s.rdb.XRange(context.Background(), "orders", receipt.Event, receipt.Event).Result()
		if err != nil || len(entries) != 1 || entries[0].Values["order"] != id {
			t.Fatalf("order %s: the Redis stream's entry %s is %+v (%v); want the order's", id, receipt.Event, entries, err)
		}
	}
}

// TestAKilledWorkersTaskGoesToAnother kills the worker process (SIGKILL)
// while it transcodes, a heartbeat per frame; a second worker takes the
// task once the heartbeat timeout (2s) passes, well before the call's
// deadline (the host's 5m), and resumes after the last frame the first
// one reported.
func TestAKilledWorkersTaskGoesToAnother(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	bin := filepath.Join(t.TempDir(), "worker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var first bytes.Buffer
	cmd := exec.Command(bin, s.args("media", "--frame-delay", "100ms")...)
	cmd.Stderr = &first
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := "video-" + s.tag
	s.start(t, "Transcode", id, Video{Name: "intro.mp4", Frames: 60})
	// Kill it once it has sent heartbeats: when the task has been
	// running a second (10 frames of 100ms).
	s.awaitRunning(t, "media")
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	s.runWorker(t, "media", "--frame-delay", "10ms")
	got := s.finish(t, id)
	var frame int
	if _, err := fmt.Sscanf(got, `"intro.mp4: 60 frames, resumed after frame %d"`, &frame); err != nil || frame < 1 || frame >= 60 {
		t.Fatalf("result %s; want the second attempt to resume after a frame the first reported\nfirst worker's log:\n%s", got, first.String())
	}
	if took := time.Since(killed); took > time.Minute {
		t.Fatalf("the task took %s to finish after the kill; the heartbeat timeout is 2s", took)
	}
	var attempts int
	for _, ev := range s.history(t, id) {
		if ev.Kind == engine.ActivityScheduled {
			attempts++
		}
	}
	if attempts != 1 {
		t.Fatalf("history holds %d ActivityScheduled events; want 1: the second attempt is the same call", attempts)
	}
}

// TestACancelledActivityCleansUp races a report that never ends against
// a 1s timer: the timer wins, the worker learns at its next heartbeat
// that the result is no longer wanted, and the activity's cleanup runs
// (it writes a key in Redis).
func TestACancelledActivityCleansUp(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.runWorker(t, "media")
	id := "race-" + s.tag
	s.start(t, "Race", id, time.Second)
	if got := s.finish(t, id); got != `"timer"` {
		t.Fatalf("result %s; want the timer to win", got)
	}
	key := "report:cleaned:" + id
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := s.rdb.Get(context.Background(), key).Result()
		if err == nil && v == "yes" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the report's cleanup did not run within a minute of its cancellation: %s is %q (%v)", key, v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAWorkerInPython runs examples/worker-python/worker.py, which speaks
// the worker protocol with Python's standard library and a worker token,
// for the events queue, beside this worker for the orders queue: the
// order's event id is the Python worker's.
func TestAWorkerInPython(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on the PATH; it is on every machine this project builds on (apt-get install python3)")
	}
	const admin, workerToken = "admin-0123456789abcdef", "work-0123456789abcdef"
	s := newSetupWith(t, server.Options{Token: admin, WorkerToken: workerToken})
	tokenFile := filepath.Join(t.TempDir(), "worker.token")
	if err := os.WriteFile(tokenFile, []byte(workerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.runWorker(t, "orders", "--token-file", tokenFile)
	id := "o-py-" + s.tag
	s.start(t, "Fulfil", id, Order{ID: id, Customer: "c-7", Cents: 5})
	py := exec.Command(python, "../worker-python/worker.py", "--host", s.url, "--token-file", tokenFile, "--tasks", "1")
	out, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("worker.py: %v\n%s", err, out)
	}
	if got, want := s.finish(t, id), `"event":"py-`+id+`"`; !strings.Contains(got, want) {
		t.Fatalf("result %s; want the Python worker's event id, %s", got, want)
	}
	if !strings.Contains(string(out), "PublishOrder of "+id+" done") {
		t.Fatalf("worker.py said %q; want it to report the task", out)
	}
}

// awaitRunning waits until a worker holds a task of queue.
func (s *setup) awaitRunning(t *testing.T, queue string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		q, err := s.h.Queue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range q.Queues {
			if c.Queue == queue && c.Running > 0 {
				return
			}
		}
	}
	t.Fatalf("no worker took a task of %s within a minute", queue)
}

func (s *setup) history(t *testing.T, id string) []engine.Event {
	t.Helper()
	events, err := s.h.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// syncBuffer is a buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
