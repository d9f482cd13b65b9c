package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestResetDryRunWarnsOfATakenChildID: the step a reset runs again starts
// a child under an id the orchestration chose, which the child the first
// run started holds. The dry run warns that the new execution cannot start
// it; a child whose id the host derives is never taken.
func TestResetDryRunWarnsOfATakenChildID(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "durabox.db"))
	c := s.client()
	wasm, err := guestbuild.Wasm("host/testdata/guests/ids")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"NamedChildThenWait", "ChildThenWait"} {
		if _, err := c.Start(context.Background(), api.StartRequest{Name: name, Input: json.RawMessage(`7`), ID: name}); err != nil {
			t.Fatal(err)
		}
		untilWaiting(t, c, name)
	}
	plan := func(id, child, warning, next string) string {
		return fmt.Sprintf(`reset %s, execution 1 (4 events), to event 1, on module %s
keep: events 1 to 1
discard: events 2 to 4
  2  SubOrchestrationScheduled("Leaf", %q, 7)
  3  SubOrchestrationCompleted(event 2, 7)
  4  ExternalSubscribed("go")
children started after event 1 go on, reporting to nobody: %s
%sthe new execution goes on with:
  2  ExecutionReset("reset from execution 1, which had 4 events, to its event 1")
  3  SubOrchestrationScheduled("Leaf", %q, 7)
dry run: nothing changed.
`, id, m.Hash[:12], child, child, warning, next)
	}
	named := "named-NamedChildThenWait"
	for _, tt := range []struct{ id, want string }{
		{"NamedChildThenWait", plan("NamedChildThenWait", named,
			`warning: instance id "named-NamedChildThenWait" is taken: the new execution cannot start that child, which will fail with "instance id … is already taken"`+"\n", named)},
		{"ChildThenWait", plan("ChildThenWait", "ChildThenWait~1:2", "", "ChildThenWait~2:3")},
	} {
		code, stdout, stderr := durabox("reset", "--addr", s.addr, tt.id, "--to-event", "1", "--dry-run")
		if code != 0 || stdout != tt.want || stderr != "" {
			t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", code, stdout, stderr, tt.want)
		}
	}
}

// untilWaiting waits until the instance waits for the event "go".
func untilWaiting(t *testing.T, c *client.Client, id string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		events, err := c.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) > 0 && events[len(events)-1].Kind == engine.ExternalSubscribed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s never waited for go; history %v", id, events)
		}
	}
}
