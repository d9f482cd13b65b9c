package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/cguest"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
)

// These tests run the real durabox binary as a separate process, stop it
// for real (SIGTERM between turns, SIGKILL while an activity runs) and
// start it again on the same SQLite file.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	guestbuild.Cleanup()
	cguest.Cleanup()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "durabox-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "durabox")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build durabox: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// serveProcess is one durabox serve process.
type serveProcess struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{}
}

var servingLine = regexp.MustCompile(`^durabox: serving on https?://(\S+)`)

// servedAddr returns the address a line of serve's output says it serves
// on: the line "durabox: serving on URL (db FILE)", or with --log-format
// json the record {"msg":"serving","url":URL,…}; else "".
func servedAddr(line string) string {
	if m := servingLine.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	var rec struct{ Msg, URL string }
	if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
		_, addr, _ := strings.Cut(rec.URL, "://")
		return addr
	}
	return ""
}

func startServer(t *testing.T, db string) *serveProcess {
	t.Helper()
	return startServerAt(t, db, "127.0.0.1:0")
}

// startServerAt starts durabox serve on db at addr, with more flags if
// given, and without $DURABOX_TOKEN.
func startServerAt(t *testing.T, db, addr string, flags ...string) *serveProcess {
	t.Helper()
	return startServerEnv(t, nil, db, addr, flags...)
}

// startServerEnv is startServerAt with the variables env ("NAME=value")
// added to its environment.
func startServerEnv(t *testing.T, env []string, db, addr string, flags ...string) *serveProcess {
	t.Helper()
	s := &serveProcess{cmd: exec.Command(binary(t), append([]string{"serve", "--db", db, "--addr", addr}, flags...)...), done: make(chan struct{})}
	s.cmd.Env = append(withoutToken(), env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = s.cmd.Stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			if addr := servedAddr(line); addr != "" {
				served <- addr
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case s.addr = <-served:
	case <-s.done:
		t.Fatalf("durabox serve exited before serving:\n%s", s.output())
	case <-time.After(60 * time.Second):
		s.kill(t)
		t.Fatalf("durabox serve did not report its address in 60s:\n%s", s.output())
	}
	t.Cleanup(func() { s.kill(t) })
	return s
}

func (s *serveProcess) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

func (s *serveProcess) client() *client.Client { return client.New("http://"+s.addr, nil) }

// withoutToken returns the environment without $DURABOX_TOKEN.
func withoutToken() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DURABOX_TOKEN=") {
			env = append(env, kv)
		}
	}
	return env
}

// stop sends sig and waits for the process to exit.
func (s *serveProcess) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(sig)
	<-s.done
	s.cmd.Wait()
}

func (s *serveProcess) kill(t *testing.T) { s.stop(t, syscall.SIGKILL) }

// waitFor polls until cond holds for the instance's history.
func waitFor(t *testing.T, c *client.Client, id, what string, cond func([]engine.Event) bool) []engine.Event {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		events, err := c.History(context.Background(), id)
		if err == nil && cond(events) {
			return events
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("instance %s: gave up waiting for %s", id, what)
	return nil
}

func deployExample(t *testing.T, c *client.Client, name string) {
	t.Helper()
	wasm, err := guestbuild.Wasm("examples/wasm/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(context.Background(), wasm); err != nil {
		t.Fatal(err)
	}
}

// checkHistory asserts a history has ids 1..n, each schedule event once and
// each completion naming a schedule event before it, completed once.
func checkHistory(t *testing.T, events []engine.Event) {
	t.Helper()
	completed := map[int64]bool{}
	kinds := map[int64]engine.EventKind{}
	for i, e := range events {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d: a gap or a duplicate", i+1, e.ID)
		}
		kinds[e.ID] = e.Kind
		switch e.Kind {
		case engine.ActivityCompleted, engine.ActivityFailed, engine.TimerFired, engine.ExternalEventDelivered, engine.ExternalEventNotDelivered:
			if k := kinds[e.ScheduleID]; k != engine.ActivityScheduled && k != engine.TimerCreated && k != engine.ExternalEventSent {
				t.Fatalf("event %d completes event %d, which is %q", e.ID, e.ScheduleID, k)
			}
			if completed[e.ScheduleID] {
				t.Fatalf("event %d completes event %d a second time", e.ID, e.ScheduleID)
			}
			completed[e.ScheduleID] = true
		}
	}
}

func kindsOf(events []engine.Event) string {
	var out []string
	for _, e := range events {
		out = append(out, string(e.Kind))
	}
	return strings.Join(out, " ")
}

func TestRestartBetweenTurns(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	s := startServer(t, db)
	deployExample(t, s.client(), "retry")
	ctx := context.Background()
	// Each activity attempt takes 300ms, like each delay, so that every
	// turn's events show before the next turn's: a fast host would
	// otherwise run several turns between two looks.
	id, err := s.client().Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"failures": 2, "delay": "300ms", "workMillis": 300}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Stop the host after every turn that adds to the history, until the
	// instance finishes; a stop is normal, and logs no error or warning.
	restarts := 0
	seen := 0
	for {
		events := waitFor(t, s.client(), id, fmt.Sprintf("more than %d events", seen), func(e []engine.Event) bool { return len(e) > seen })
		seen = len(events)
		if events[len(events)-1].Kind == engine.OrchestrationCompleted {
			break
		}
		// What the stop logged: a request that a busy machine made slow
		// is warned of before it, and is not the stop's.
		before := len(s.output())
		s.stop(t, syscall.SIGTERM)
		if bad := regexp.MustCompile(`(?m)^.*level=(ERROR|WARN).*$`).FindAllString(s.output()[before:], -1); bad != nil {
			t.Fatalf("a normal stop (SIGTERM) logged:\n%s", strings.Join(bad, "\n"))
		}
		s = startServer(t, db)
		restarts++
	}
	inst, err := s.client().Instance(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"succeeded on attempt 3"` {
		t.Fatalf("after %d restarts: status %s result %s", restarts, inst.Status, inst.Result)
	}
	events, _ := s.client().History(ctx, id)
	checkHistory(t, events)
	const want = "OrchestrationStarted ActivityScheduled ActivityFailed TimerCreated TimerFired ActivityScheduled ActivityFailed TimerCreated TimerFired ActivityScheduled ActivityCompleted OrchestrationCompleted"
	if got := kindsOf(events); got != want {
		t.Fatalf("history after %d restarts:\n got %s\nwant %s", restarts, got, want)
	}
	if restarts < 3 {
		t.Fatalf("only %d restarts happened", restarts)
	}
	t.Logf("completed across %d restarts", restarts)
}

func TestKillDuringActivity(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	s := startServer(t, db)
	deployExample(t, s.client(), "retry")
	ctx := context.Background()
	id, err := s.client().Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"workMillis": 3000}`)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.output(), "FlakyTask attempt 1 starting (delivery 1)") {
		if time.Now().After(deadline) {
			t.Fatalf("the activity never started:\n%s", s.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.kill(t)

	s = startServer(t, db)
	inst, err := s.client().Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"succeeded on attempt 1"` {
		t.Fatalf("status %s result %s", inst.Status, inst.Result)
	}
	if !strings.Contains(s.output(), "FlakyTask attempt 1 starting (delivery 2)") {
		t.Errorf("the activity was not delivered again after the kill:\n%s", s.output())
	}
	events, _ := s.client().History(ctx, id)
	checkHistory(t, events)
	if got, want := kindsOf(events), "OrchestrationStarted ActivityScheduled ActivityCompleted OrchestrationCompleted"; got != want {
		t.Fatalf("history:\n got %s\nwant %s", got, want)
	}
}

// TestSecondServeOnOneFileIsRefused starts a second durabox serve on a file
// a first one serves: it exits at once with an error naming the first
// process, and the first one keeps serving.
func TestSecondServeOnOneFileIsRefused(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	first := startServer(t, db)
	out, err := exec.Command(binary(t), "serve", "--db", db, "--addr", "127.0.0.1:0").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the second serve: %v, want it to exit with an error\n%s", err, out)
	}
	want := fmt.Sprintf("is in use by another durabox process (pid %d); stop it first or use another --db file", first.cmd.Process.Pid)
	if !strings.Contains(string(out), want) {
		t.Fatalf("the second serve said:\n%s\nwant it to say %q", out, want)
	}
	if _, err := first.client().List(context.Background(), client.ListRequest{}); err != nil {
		t.Fatalf("the first serve stopped serving: %v", err)
	}
}

// TestRefusalWaitsForTheLockHoldersPid: the holder of a SQLite file's
// lock writes its pid in the lock file just after it takes the lock, so a
// second serve may find the lock taken and the file still empty (two
// started at once). It waits for the pid rather than saying "pid unknown".
// The test holds the lock as a holder in that instant, and writes its pid
// once the second serve has the lock file open.
func TestRefusalWaitsForTheLockHoldersPid(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	lock, err := os.OpenFile(db+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "serve", "--db", db, "--addr", "127.0.0.1:0")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if !awaitOpen(cmd.Process.Pid, db+".lock", exited) {
		t.Fatalf("durabox serve exited without waiting for the holder's pid:\n%s", out.String())
	}
	if _, err := lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("durabox serve did not exit:\n%s", out.String())
	}
	if want := fmt.Sprintf("is in use by another durabox process (pid %d)", os.Getpid()); !strings.Contains(out.String(), want) {
		t.Fatalf("durabox serve said:\n%s\nwant it to say %q", out.String(), want)
	}
}

// awaitOpen waits until process pid has the file name open, and reports
// whether it did before it exited.
func awaitOpen(pid int, name string, exited <-chan error) bool {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	for {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == name {
				return true
			}
		}
		select {
		case <-exited:
			return false
		case <-time.After(time.Millisecond):
		}
	}
}

// startWait runs durabox start --wait for an Approval of id against the
// host at addr, in the background, and returns what it ends with.
func startWait(addr, id string) <-chan [3]string {
	ended := make(chan [3]string, 1)
	go func() {
		code, stdout, stderr := durabox("start", "Approval", "--addr", addr, "--id", id, "--wait",
			"--input", `{"item": "`+id+`", "timeout": "1h"}`)
		ended <- [3]string{fmt.Sprint(code), stdout, stderr}
	}()
	return ended
}

// waitingForApproval waits until the instance waits for its Approval.
func waitingForApproval(t *testing.T, c *client.Client, id string) {
	t.Helper()
	waitFor(t, c, id, "its wait", func(e []engine.Event) bool { return strings.Contains(kindsOf(e), "ExternalSubscribed") })
}

// TestStartWaitAcrossARestart: durabox start --wait keeps waiting while
// the host restarts, and prints the result once it comes.
func TestStartWaitAcrossARestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "durabox.db")
	s := startServer(t, db)
	deployExample(t, s.client(), "approval")
	ended := startWait(s.addr, "order")
	waitingForApproval(t, s.client(), "order")
	// Had it given up while the host was away, it would have ended with
	// exit code 1 and the error.
	s.stop(t, syscall.SIGTERM)
	s = startServerAt(t, db, s.addr)
	if err := s.client().Raise(context.Background(), "order", api.RaiseRequest{Name: "Approval", Data: json.RawMessage(`{"approved": true, "by": "ada"}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ended:
		if want := [3]string{"0", "order\nCompleted\n\"order approved by ada\"\n", ""}; got != want {
			t.Fatalf("durabox start --wait: %q\nwant %q", got, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("durabox start --wait did not end within a minute of the approval")
	}
}

// TestStartWaitExitCodes: durabox start --wait exits 1 when the instance
// is canceled or terminated, as when it fails.
func TestStartWaitExitCodes(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	deployExample(t, s.client(), "approval")
	tests := []struct {
		id, status, failure string
		end                 func(c *client.Client, id string) error
	}{
		{"canceled", "Canceled", "durabox: the instance was cancelled: withdrawn", func(c *client.Client, id string) error {
			return c.Cancel(context.Background(), id, "withdrawn")
		}},
		{"terminated", "Terminated", "terminated: stuck", func(c *client.Client, id string) error {
			return c.Terminate(context.Background(), id, "stuck")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			ended := startWait(s.addr, tt.id)
			waitingForApproval(t, s.client(), tt.id)
			if err := tt.end(s.client(), tt.id); err != nil {
				t.Fatal(err)
			}
			want := [3]string{"1", tt.id + "\n" + tt.status + "\n", "durabox: start: instance " + tt.id + " ended " + tt.status + ": " + tt.failure + "\n"}
			if got := <-ended; got != want {
				t.Fatalf("durabox start --wait: %q\nwant %q", got, want)
			}
		})
	}
}
