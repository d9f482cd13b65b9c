package main

import (
	"context"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/store"
)

// withBatch starts the instance "running" and a batch that cancels it.
func withBatch(t *testing.T, h *fakehost.Host) {
	t.Helper()
	running(t, h)
	if _, err := h.StartBatch(context.Background(), store.InstanceFilter{}, "where=customer+%3D+%22c-42%22", api.BatchRequest{Action: api.BatchCancel, Reason: "gone"}); err != nil {
		t.Fatal(err)
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestBatch(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "a dry run",
			setup:      running,
			args:       []string{"batch", "cancel", "--where", `customer = "c-42"`, "--dry-run"},
			wantStdout: "cancel of 1 instance would be taken (a dry run: nothing changed):\n  running\n",
			check:      requested(),
		},
		{
			name:  "cancel",
			setup: running,
			args:  []string{"batch", "cancel", "--where", `customer = "c-42"`, "--reason", "gone", "--rate", "5"},
			wantStdout: "batch          1\n" +
				"action         cancel, reason \"gone\"\n" +
				"filter         where=customer = \"c-42\"\n" +
				"rate           5 a second\n" +
				"state          completed\n" +
				"progress       1 of 1 taken: 1 done, 0 failed, 0 skipped\n" +
				"last instance  running\n" +
				"created        2025-01-02T03:04:10.000Z\n",
			check: requested("running: gone"),
		},
		{
			name:  "cancel, waiting",
			setup: running,
			args:  []string{"batch", "cancel", "--status", "Pending", "--wait"},
			wantStdout: "batch 1: 1 of 1 taken: 1 done, 0 failed, 0 skipped\n" +
				"batch          1\n" +
				"action         cancel\n" +
				"filter         status=Pending\n" +
				"rate           no limit\n" +
				"state          completed\n" +
				"progress       1 of 1 taken: 1 done, 0 failed, 0 skipped\n" +
				"last instance  running\n" +
				"created        2025-01-02T03:04:10.000Z\n",
			check: requested("running: "),
		},
		{
			name:  "raise",
			setup: running,
			args:  []string{"batch", "raise", "--where", `customer = "c-42"`, "--event", "Approval", "--data", `{"ok": true}`, "--json"},
			wantStdout: `{
  "id": 1,
  "action": "raise",
  "request": {
    "action": "raise",
    "event": "Approval",
    "data": {
      "ok": true
    }
  },
  "filter": "where=customer+%3D+%22c-42%22",
  "state": "completed",
  "matched": 1,
  "done": 1,
  "failed": 0,
  "skipped": 0,
  "lastInstance": "running",
  "createdAt": "2025-01-02T03:04:10Z",
  "updatedAt": "2025-01-02T03:04:10Z"
}
`,
		},
		{
			name:       "no filter",
			args:       []string{"batch", "cancel"},
			wantCode:   2,
			wantStderr: "durabox batch: say which instances the batch takes, with the flags of durabox list, such as --where 'customer = \"c-42\"'\n", wantUsage: true,
		},
		{
			name:       "not an action",
			args:       []string{"batch", "pause", "--where", "x = 1"},
			wantCode:   2,
			wantStderr: "durabox batch: \"pause\" is not one of cancel, terminate, raise, reset, upgrade, list, show, stop\n", wantUsage: true,
		},
		{
			name:       "--to for a cancel",
			args:       []string{"batch", "cancel", "--where", "x = 1", "--to", "start"},
			wantCode:   2,
			wantStderr: "durabox batch: --to and --on-module are for batch reset and upgrade\n", wantUsage: true,
		},
		{
			name:       "no batches",
			args:       []string{"batch", "list"},
			wantStdout: "no batches; start one with `durabox batch cancel --where EXPR`\n",
		},
		{
			name:  "list",
			setup: withBatch,
			args:  []string{"batch", "list"},
			wantStdout: "ID  ACTION  STATE      MATCHED  DONE  FAILED  SKIPPED  BY    CREATED                   FILTER\n" +
				"1   cancel  completed  1        1     0       0        none  2025-01-02T03:04:10.000Z  where=customer = \"c-42\"\n",
		},
		{
			name:  "show",
			setup: withBatch,
			args:  []string{"batch", "show", "1"},
			wantStdout: "batch          1\n" +
				"action         cancel, reason \"gone\"\n" +
				"filter         where=customer = \"c-42\"\n" +
				"rate           no limit\n" +
				"state          completed\n" +
				"progress       1 of 1 taken: 1 done, 0 failed, 0 skipped\n" +
				"last instance  running\n" +
				"created        2025-01-02T03:04:10.000Z\n",
		},
		{
			name:       "stop a batch that ended",
			setup:      withBatch,
			args:       []string{"batch", "stop", "1"},
			wantCode:   1,
			wantStderr: "durabox: stop batch: batch not running: batch 1 is completed already\n",
		},
		{
			name:       "no such batch",
			args:       []string{"batch", "show", "7"},
			wantCode:   1,
			wantStderr: "durabox: show batch: batch not found: 7; GET /v1/batches (durabox batch list) lists them\n",
		},
		{
			name:       "not an id",
			args:       []string{"batch", "stop", "seven"},
			wantCode:   2,
			wantStderr: "durabox batch: \"seven\" is not a batch's id, a number from 1 (durabox batch list shows them)\n", wantUsage: true,
		},
	})
}
