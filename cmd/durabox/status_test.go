package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
)

// refused returns a setup that starts instance id of Greeting and makes
// the host unable to run its module.
func refused(id string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"you"`), id); err != nil {
			t.Fatal(err)
		}
		h.SetRefused(hash, fmt.Errorf("%w 5c471d4fcbf9: sandbox: wasmtime runs only modules whose loops the sandbox can count", api.ErrCannotRun))
	}
}

// waiting returns a setup that starts instance id of Greeting, waiting
// on a timer, an event, a child and an update.
func waiting(id string) func(*testing.T, *fakehost.Host) {
	at := time.Date(2025, 1, 2, 3, 4, 9, 0, time.UTC)
	due := at.Add(time.Hour)
	return waitingOn(id, engine.Wait{Kind: engine.WaitTimer, ScheduleID: 2, Since: at, Due: &due},
		engine.Wait{Kind: engine.WaitEvent, ScheduleID: 3, Name: "Approve", Persistent: true, Since: at},
		engine.Wait{Kind: engine.WaitChild, ScheduleID: 4, Name: "Ship", ID: id + "~1:4", Since: at},
		engine.Wait{Kind: engine.WaitUpdate, Name: "Add", ID: "u1", Since: at})
}

// waitingOn returns a setup that starts instance id of Greeting, waiting
// on waits.
func waitingOn(id string, waits ...engine.Wait) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"you"`), id); err != nil {
			t.Fatal(err)
		}
		h.SetWaits(id, waits)
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestStatus(t *testing.T) {
	runTests(t, []cliTest{
		{
			name: "completed",
			args: []string{"status", "done"},
			wantStdout: `id         done
name       Greeting
status     Completed
module     5c471d4fcbf9
execution  1
created    2025-01-02T03:04:07.000Z
updated    2025-01-02T03:04:08.000Z
input      "world"
result     "Hello, world!"
`,
		},
		{
			name: "search attributes",
			setup: func(t *testing.T, h *fakehost.Host) {
				h.SetAttributes("done", abi.Attribute{Name: "customer", Type: abi.AttributeString, String: "c-42"},
					abi.Attribute{Name: "tags", Type: abi.AttributeKeywords, Keywords: []string{"new", "vip"}},
					abi.Attribute{Name: "total", Type: abi.AttributeFloat, Float: 150.5})
			},
			args: []string{"status", "done"},
			wantStdout: `id         done
name       Greeting
status     Completed
module     5c471d4fcbf9
execution  1
created    2025-01-02T03:04:07.000Z
updated    2025-01-02T03:04:08.000Z
input      "world"
result     "Hello, world!"
attribute  customer = "c-42" (string)
attribute  tags = ["new","vip"] (keywords)
attribute  total = 150.5 (float)
`,
		},
		{
			name:  "failed",
			setup: startAndWait("Fails", `{"n": 1}`, "f"),
			args:  []string{"status", "f"},
			wantStdout: `id         f
name       Fails
status     Failed
module     5c471d4fcbf9
execution  1
created    2025-01-02T03:04:09.000Z
updated    2025-01-02T03:04:10.000Z
input      {"n":1}
failure    boom
`,
		},
		{
			name: "--json",
			args: []string{"status", "done", "--json"},
			wantStdout: `{
  "id": "done",
  "name": "Greeting",
  "moduleHash": "` + hash + `",
  "executionId": 1,
  "status": "Completed",
  "input": "world",
  "result": "Hello, world!",
  "createdAt": "2025-01-02T03:04:07Z",
  "updatedAt": "2025-01-02T03:04:08Z",
  "executions": [
    {
      "id": 1,
      "events": 2,
      "startedAt": "2025-01-02T03:04:07Z",
      "endedAt": "2025-01-02T03:04:08Z",
      "end": "OrchestrationCompleted"
    }
  ],
  "children": []
}
`,
		},
		{
			name:  "a history past the warning",
			setup: func(t *testing.T, h *fakehost.Host) { h.SetHistoryWarning(1) },
			args:  []string{"status", "done"},
			wantStdout: `id         done
name       Greeting
status     Completed
module     5c471d4fcbf9
execution  1
created    2025-01-02T03:04:07.000Z
updated    2025-01-02T03:04:08.000Z
input      "world"
result     "Hello, world!"
warning    the history of the current execution has 2 events, past the warning at 1 (serve --history-warning): every cold replay reads all of them; an orchestration that runs for ever should continue as new
`,
		},
		{
			name:  "waiting for a host that can run its module",
			setup: refused("w"),
			args:  []string{"status", "w"},
			wantStdout: `id             w
name           Greeting
status         Pending
module         5c471d4fcbf9
execution      1
created        2025-01-02T03:04:09.000Z
updated        2025-01-02T03:04:09.000Z
input          "you"
last progress  2025-01-02T03:04:09.000Z
warning        it waits for a host that can run its module: this host cannot run the module 5c471d4fcbf9: sandbox: wasmtime runs only modules whose loops the sandbox can count
`,
		},
		{
			name:  "waiting",
			setup: waiting("w"),
			args:  []string{"status", "w"},
			wantStdout: `id             w
name           Greeting
status         Pending
module         5c471d4fcbf9
execution      1
created        2025-01-02T03:04:09.000Z
updated        2025-01-02T03:04:09.000Z
input          "you"
last progress  2025-01-02T03:04:09.000Z
waiting on     timer due at 2025-01-02T04:04:09.000Z, since 2025-01-02T03:04:09.000Z
waiting on     event Approve (persistent), since 2025-01-02T03:04:09.000Z
waiting on     child Ship w~1:4 (durabox status w~1:4), since 2025-01-02T03:04:09.000Z
waiting on     update Add u1, its handler running, since 2025-01-02T03:04:09.000Z
`,
		},
		{
			name:  "waiting on an update",
			setup: waitingOn("w", engine.Wait{Kind: engine.WaitUpdate}),
			args:  []string{"status", "w"},
			wantStdout: `id             w
name           Greeting
status         Pending
module         5c471d4fcbf9
execution      1
created        2025-01-02T03:04:09.000Z
updated        2025-01-02T03:04:09.000Z
input          "you"
last progress  2025-01-02T03:04:09.000Z
waiting on     update of any name: it waits on nothing else
`,
		},
		{
			name:       "not found",
			args:       []string{"status", "nope"},
			wantCode:   1,
			wantStderr: "durabox: get instance: instance not found: \"nope\"\n",
		},
		{
			name:       "no id",
			args:       []string{"status"},
			wantCode:   2,
			wantStderr: "durabox status: missing ID\n", wantUsage: true,
		},
	})
}
