package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/store"
)

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestList(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:  "list",
			setup: startAndWait("Fails", "null", "another"),
			args:  []string{"list"},
			wantStdout: `ID       NAME      STATUS     CREATED                   UPDATED
another  Fails     Failed     2025-01-02T03:04:09.000Z  2025-01-02T03:04:10.000Z
done     Greeting  Completed  2025-01-02T03:04:07.000Z  2025-01-02T03:04:08.000Z
`,
		},
		{
			name: "--json",
			args: []string{"list", "--json"},
			wantStdout: `{
  "instances": [
    {
      "id": "done",
      "name": "Greeting",
      "moduleHash": "` + hash + `",
      "executionId": 1,
      "status": "Completed",
      "createdAt": "2025-01-02T03:04:07Z",
      "updatedAt": "2025-01-02T03:04:08Z"
    }
  ]
}
`,
		},
		{
			name:       "nothing",
			empty:      true,
			args:       []string{"list"},
			wantStdout: "no instances\n",
		},
		{
			name:       "nothing --json",
			empty:      true,
			args:       []string{"list", "--json"},
			wantStdout: "{\n  \"instances\": []\n}\n",
		},
		{
			name:  "filters and a page",
			setup: startAndWait("Fails", "null", "another"),
			args: []string{"list", "--status", "Failed", "--status", "running,Canceled", "--name", "Fails", "--id-prefix", "an",
				"--created-after", "2025-01-01", "--created-before", "2025-01-02T03:04:09.5Z", "--module", "5c4", "--limit", "1"},
			wantStdout: `ID       NAME   STATUS  CREATED                   UPDATED
another  Fails  Failed  2025-01-02T03:04:09.000Z  2025-01-02T03:04:10.000Z
more: run the same command with --cursor 1
`,
			check: func(t *testing.T, h *fakehost.Host) {
				want := store.InstanceQuery{Limit: 1, Filter: store.InstanceFilter{
					Statuses: []engine.Status{engine.StatusFailed, engine.StatusRunning, engine.StatusCanceled}, Name: "Fails", ModuleHash: hash,
					IDPrefix: "an", CreatedAfter: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), CreatedBefore: time.Date(2025, 1, 2, 3, 4, 9, 5e8, time.UTC)}}
				got := h.ListQuery()
				got.Filter.CreatedAfter, got.Filter.CreatedBefore = got.Filter.CreatedAfter.UTC(), got.Filter.CreatedBefore.UTC()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("query %+v\nwant %+v", got, want)
				}
			},
		},
		{
			name: "a filter",
			args: []string{"list", "--where", `customer = "c-42" AND amount > 100`},
			// The fake host does not filter: it keeps the filter it was given.
			wantStdout: `ID    NAME      STATUS     CREATED                   UPDATED
done  Greeting  Completed  2025-01-02T03:04:07.000Z  2025-01-02T03:04:08.000Z
`,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.ListQuery().Filter.Where; got == nil || got.String() != `(customer = "c-42" AND amount > 100)` {
					t.Errorf("the host's filter %v; want customer = \"c-42\" AND amount > 100", got)
				}
			},
		},
		{
			name:       "a filter that does not parse",
			args:       []string{"list", "--where", `customer = c-42`},
			wantCode:   1,
			wantStderr: "durabox: list instances: bad input: where=\"customer = c-42\": query: at 12: expected a value after customer =, found the name \"c\"; quote a string: \"c\"\n",
		},
		{
			name:       "children",
			args:       []string{"list", "--parent", "done"},
			wantStdout: "no instances\n",
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.ListQuery(); got.Filter.ParentID != "done" {
					t.Errorf("query %+v, want the children of done", got)
				}
			},
		},
		{
			name: "stalled, waiting on a timer or an event",
			args: []string{"list", "--stalled-for", "10m", "--waiting-on", "timer", "--waiting-on", "Event"},
			wantStdout: `ID    NAME      STATUS     CREATED                   UPDATED
done  Greeting  Completed  2025-01-02T03:04:07.000Z  2025-01-02T03:04:08.000Z
`, // the fake host does not filter
			check: func(t *testing.T, h *fakehost.Host) {
				got := h.ListQuery().Filter
				if want := h.Now().Add(-10 * time.Minute); !got.ProgressedBefore.Equal(want) ||
					!reflect.DeepEqual(got.WaitingOn, []engine.WaitKind{engine.WaitTimer, engine.WaitEvent}) {
					t.Errorf("filter %+v; want no progress since %s, waiting on a timer or an event", got, want)
				}
			},
		},
		{
			name:       "waiting on what is no wait",
			args:       []string{"list", "--waiting-on", "approval"},
			wantCode:   2,
			wantStderr: "durabox list: invalid value \"approval\" for flag --waiting-on: \"approval\" is not a kind of wait; it is one of activity,timer,event,update,child\n", wantUsage: true,
		},
		{
			name:  "the next page",
			setup: startAndWait("Fails", "null", "another"),
			args:  []string{"list", "--limit", "1", "--cursor", "1"},
			wantStdout: `ID    NAME      STATUS     CREATED                   UPDATED
done  Greeting  Completed  2025-01-02T03:04:07.000Z  2025-01-02T03:04:08.000Z
`,
		},
		{
			name:       "a limit past the most",
			args:       []string{"list", "--limit", "1001"},
			wantCode:   2,
			wantStderr: "durabox list: invalid value \"1001\" for flag --limit: it must be a whole number from 1 to 1000\n", wantUsage: true,
		},
		{
			name:       "a limit that overflows",
			args:       []string{"list", "--limit", "99999999999999999999"},
			wantCode:   2,
			wantStderr: "durabox list: invalid value \"99999999999999999999\" for flag --limit: it must be a whole number from 1 to 1000\n", wantUsage: true,
		},
		{
			name:       "an argument",
			args:       []string{"list", "all"},
			wantCode:   2,
			wantStderr: "durabox list: unexpected argument \"all\"\n", wantUsage: true,
		},
	})
}
