package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// The tokens of TestAuditNamesTheToken: alice's, bob's and the worker's
// come from serve's --token-file, carol's from --token.
const (
	aliceSecret  = "alice-0123456789abcdef0123"
	bobSecret    = "bob-0123456789abcdef012345"
	workerSecret = "worker-0123456789abcdef012"
	carolSecret  = "carol-0123456789abcdef0123"
)

// TestAuditNamesTheToken runs a real durabox serve whose tokens have
// names and makes each kind of change through its API: the audit log
// names the token of each (GET /v1/audit and durabox audit), refusals
// included; the history of each instance changed names it on the event
// the change made (durabox history too); a read or a worker's token may
// not read the log, and a request without a token is not recorded.
func TestAuditNamesTheToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	writeFile(t, tokens, []byte("# who may do what\nalice="+aliceSecret+"\nbob="+bobSecret+":read\n\nci-worker="+workerSecret+":worker\n"))
	s := startServerAt(t, filepath.Join(dir, "durabox.db"), "127.0.0.1:0", "--token-file", tokens, "--token", "carol="+carolSecret+":admin")
	ctx := context.Background()
	as := func(secret string) *client.Client {
		return client.New("http://"+s.addr, &client.Options{Token: secret})
	}
	alice, bob, carol, worker := as(aliceSecret), as(bobSecret), as(carolSecret), as(workerSecret)

	v1 := deployVersion(t, alice)
	wasm, err := guestbuild.Wasm("host/testdata/guests/updates")
	if err != nil {
		t.Fatal(err)
	}
	cart, err := carol.Deploy(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	start := func(c *client.Client, name, input, id string) {
		t.Helper()
		if _, err := c.Start(ctx, api.StartRequest{Name: name, Input: json.RawMessage(input), ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"reset-me", "move-me", "cancel-me", "end-me"} {
		start(alice, "Flow", `"x"`, id)
	}
	start(carol, "Cart", `{}`, "cart")
	untilAll(t, alice, []string{"reset-me", "move-me", "cancel-me", "end-me"}, "the first wait", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusRunning })
	goOn(t, alice, []string{"reset-me"})
	untilAll(t, alice, []string{"reset-me"}, "the second wait", func(inst api.InstanceSummary) bool { return inst.CustomStatus == atSecond })
	if _, err := carol.Update(ctx, "cart", api.UpdateRequest{Name: "Checkout"}); err != nil {
		t.Fatal(err)
	}
	if _, err := carol.StartWithUpdate(ctx, api.StartRequest{Name: "Cart", Input: json.RawMessage(`{}`), ID: "cart2", Update: &api.UpdateRequest{Name: "Checkout"}}); err != nil {
		t.Fatal(err)
	}
	v2 := deployVersion(t, alice, "main.version=v2")
	if _, err := alice.Reset(ctx, "reset-me", api.ResetRequest{ToEvent: 3, Module: v2}); err != nil {
		t.Fatal(err)
	}
	if _, err := carol.Upgrade(ctx, api.UpgradeRequest{From: v1, To: v2, Instances: []string{"move-me"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := alice.Cancel(ctx, "cancel-me", "not wanted"); err != nil {
		t.Fatal(err)
	}
	if err := carol.Terminate(ctx, "end-me", "stuck"); err != nil {
		t.Fatal(err)
	}
	untilAll(t, alice, []string{"end-me"}, "its end", func(inst api.InstanceSummary) bool { return inst.Status == engine.StatusTerminated })
	if err := carol.Purge(ctx, "end-me"); err != nil {
		t.Fatal(err)
	}
	if err := alice.RemoveModule(ctx, v1); err == nil {
		t.Fatal("removing a module in use: no error")
	}
	if _, err := alice.CreateSchedule(ctx, api.ScheduleRequest{Name: "hourly", Every: "1h", Orchestration: "Flow", Input: json.RawMessage(`"s"`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PauseSchedule(ctx, "hourly", "for the test"); err != nil {
		t.Fatal(err)
	}
	if _, err := carol.ResumeSchedule(ctx, "hourly"); err != nil {
		t.Fatal(err)
	}
	run, err := carol.TriggerSchedule(ctx, "hourly")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.DeleteSchedule(ctx, "hourly"); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PurgeMatching(ctx, client.Filter{Statuses: []engine.Status{engine.StatusCanceled}, Name: "Nothing"}, true); err != nil {
		t.Fatal(err)
	}
	// Refused: bob may only read, the worker only work; nobody's request
	// is not recorded.
	if err := bob.Cancel(ctx, "reset-me", "bob was here"); !isStatus(err, 403) {
		t.Fatalf("bob's cancel: %v; want 403", err)
	}
	for name, c := range map[string]*client.Client{"bob": bob, "the worker": worker} {
		if _, err := c.Audit(ctx, client.AuditRequest{}); !isStatus(err, 403) {
			t.Fatalf("%s reads the audit log: %v; want 403", name, err)
		}
	}
	if err := as("").Raise(ctx, "reset-me", api.RaiseRequest{Name: "go"}); !isStatus(err, 401) {
		t.Fatalf("a raise without a token: %v; want 401", err)
	}

	// The log, newest first: one record for each change, naming its
	// token, and nothing else.
	page, err := alice.Audit(ctx, client.AuditRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(page.Records) - 1; i >= 0; i-- {
		r := page.Records[i]
		got = append(got, strings.Join([]string{r.Token, r.Role, r.Action, r.Target, r.Outcome}, " "))
	}
	want := []string{
		"alice admin deploy " + v1 + " ok",
		"carol admin deploy " + cart.Hash + " ok",
		"alice admin start reset-me ok", "alice admin start move-me ok", "alice admin start cancel-me ok", "alice admin start end-me ok",
		"carol admin start cart ok",
		"alice admin raise reset-me ok",
		"carol admin update cart ok",
		"carol admin start cart2 ok",
		"alice admin deploy " + v2 + " ok",
		"alice admin reset reset-me ok",
		"carol admin upgrade " + v1 + " ok",
		"alice admin cancel cancel-me ok",
		"carol admin terminate end-me ok",
		"carol admin purge end-me ok",
		"alice admin remove-module " + v1 + " refused",
		"alice admin schedule-create hourly ok",
		"alice admin schedule-pause hourly ok",
		"carol admin schedule-resume hourly ok",
		"carol admin schedule-trigger hourly ok",
		"alice admin schedule-delete hourly ok",
		"alice admin purge  ok",
		"bob read cancel reset-me refused",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	details := map[string]string{}
	for _, r := range page.Records {
		details[r.Action+" "+r.Target] = r.Detail
	}
	for key, want := range map[string]string{
		"raise reset-me":          `event "go"`,
		"cancel cancel-me":        `reason "not wanted"`,
		"update cart":             `update "Checkout"`,
		"start cart2":             `orchestration "Cart" with update "Checkout"`,
		"schedule-trigger hourly": "run " + run.InstanceID,
		"cancel reset-me":         "forbidden: this token may only read (GET); POST /v1/instances/{id}/cancel needs the admin token",
	} {
		if details[key] != want {
			t.Errorf("the detail of %s: %q; want %q", key, details[key], want)
		}
	}
	bobs, err := alice.Audit(ctx, client.AuditRequest{Token: "bob"})
	if err != nil || len(bobs.Records) != 1 || bobs.Records[0].Action != "cancel" {
		t.Fatalf("bob's records: %+v, %v; want his refused cancel alone", bobs, err)
	}

	// Each instance's history names who changed it, on the event the
	// change made.
	wantBy := map[string][]string{
		// Execution 2, which the reset began: the events it kept, then its
		// marker.
		"reset-me":  {"OrchestrationStarted alice", "ExternalEvent alice", "ExecutionReset alice"},
		"move-me":   {"OrchestrationStarted alice", "ModuleChanged carol"},
		"cancel-me": {"OrchestrationStarted alice", "OrchestrationCancelRequested alice"},
		"cart":      {"OrchestrationStarted carol", "UpdateAccepted carol"},
		"cart2":     {"OrchestrationStarted carol", "UpdateAccepted carol"},
	}
	for id, want := range wantBy {
		events := waitFor(t, alice, id, "the change's event", func(events []engine.Event) bool { return len(byEvents(events)) >= len(want) })
		if got := byEvents(events); strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s: the events with a by: %v; want %v", id, got, want)
		}
	}
	// The command line shows the same.
	aliceFile := filepath.Join(dir, "alice.token")
	writeFile(t, aliceFile, []byte(aliceSecret+"\n"))
	code, stdout, stderr := durabox("audit", "--addr", s.addr, "--token-file", aliceFile, "--action", "cancel")
	if code != 0 || !strings.Contains(stdout, "TIME") || !strings.Contains(stdout, "alice  admin  cancel  cancel-me  ok 202") ||
		!strings.Contains(stdout, "bob    read   cancel  reset-me   refused 403") {
		t.Errorf("durabox audit --action cancel: exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = durabox("history", "cancel-me", "--addr", s.addr, "--token-file", aliceFile)
	if code != 0 || !strings.Contains(stdout, `reason="not wanted" by=alice`) {
		t.Errorf("durabox history cancel-me: exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if log := s.output(); strings.Contains(log, aliceSecret) || strings.Contains(log, carolSecret) {
		t.Errorf("serve's log shows a secret:\n%s", log)
	}
}

// byEvents lists the events of a history that name who asked for them,
// as "Kind by".
func byEvents(events []engine.Event) []string {
	var out []string
	for _, ev := range events {
		if ev.By != "" {
			out = append(out, string(ev.Kind)+" "+ev.By)
		}
	}
	return out
}

// isStatus reports whether err is the client's error with status.
func isStatus(err error, status int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.StatusCode == status
}

// TestServeRefusesTokenFiles: serve refuses a token file others may read,
// and one with a bad line, naming the line, before it listens.
func TestServeRefusesTokenFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, text string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return path
	}
	open := file("open", "alice="+aliceSecret+"\n", 0o644)
	group := file("group", "alice="+aliceSecret+"\n", 0o640)
	bad := file("bad", "alice="+aliceSecret+"\n# a comment\nbob="+bobSecret+":reader\n", 0o600)
	twice := file("twice", "alice="+aliceSecret+"\nalice="+bobSecret+":read\n", 0o600)
	readers := file("readers", "bob="+bobSecret+":read\n", 0o600)
	db := filepath.Join(dir, "durabox.db")
	for _, tt := range []struct{ name, file, want string }{
		{"readable by all", open, "durabox serve: --token-file: " + open + " holds secrets but others may read it (mode 0644); make it its owner's alone: chmod 600 " + open},
		{"readable by its group", group, "durabox serve: --token-file: " + group + " holds secrets but others may read it (mode 0640); make it its owner's alone: chmod 600 " + group},
		{"a bad role", bad, "durabox serve: --token-file: " + bad + `, line 3: token "bob" has the role "reader"; a role is admin, read or worker, as in bob=SECRET:read`},
		{"a name twice", twice, `durabox: serve: host: two tokens are named "alice"; give each its own name`},
		{"no admin", readers, "durabox: serve: host: no token is an admin's: with none, nothing could deploy or start; give one the role admin (name=SECRET, or name=SECRET:admin)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := durabox("serve", "--db", db, "--addr", "127.0.0.1:0", "--token-file", tt.file)
			if code == 0 || stdout != "" || !strings.HasPrefix(stderr, tt.want+"\n") {
				t.Errorf("exit code %d, stdout %q, stderr:\n%s\nwant it to begin:\n%s", code, stdout, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused serve left %s: %v", db, err)
	}
}

// TestServeReloadsTokens: on SIGHUP serve reads its token file again: a
// token added is accepted and one taken out refused from then on; a file
// it refuses leaves it the tokens it had, saying why in its log.
func TestServeReloadsTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	writeFile(t, tokens, []byte("alice="+aliceSecret+"\ncarol="+carolSecret+"\n"))
	s := startServerAt(t, filepath.Join(dir, "durabox.db"), "127.0.0.1:0", "--token-file", tokens)
	ctx := context.Background()
	access := func(secret string) (api.AccessResponse, error) {
		return client.New("http://"+s.addr, &client.Options{Token: secret}).Access(ctx)
	}
	if _, err := access(bobSecret); !isStatus(err, 401) {
		t.Fatalf("bob before the reload: %v; want 401", err)
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s; serve's log:\n%s", what, s.output())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	writeFile(t, tokens, []byte("alice="+aliceSecret+"\nbob="+bobSecret+":read\n"))
	s.cmd.Process.Signal(syscall.SIGHUP)
	until("bob's token", func() bool {
		got, err := access(bobSecret)
		return err == nil && got.Token == "bob" && got.Access == "read"
	})
	if _, err := access(carolSecret); !isStatus(err, 401) {
		t.Fatalf("carol, taken out of the file: %v; want 401", err)
	}
	writeFile(t, tokens, []byte("alice="+aliceSecret+"\nbob="+bobSecret+":reader\n"))
	s.cmd.Process.Signal(syscall.SIGHUP)
	until("the refusal in the log", func() bool {
		return strings.Contains(s.output(), `tokens, line 2: token \"bob\" has the role \"reader\"`)
	})
	if got, err := access(bobSecret); err != nil || got.Access != "read" {
		t.Fatalf("bob after a refused reload: %+v, %v; want his read token still", got, err)
	}
	if !strings.Contains(s.output(), "msg=\"tokens reloaded\" tokens=alice,bob") {
		t.Errorf("serve's log does not say what it reloaded:\n%s", s.output())
	}
}
