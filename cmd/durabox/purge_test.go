package main

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/store"
)

// instances returns a check that the host's instances are ids, newest
// first.
func instances(ids ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		all, err := h.List(context.Background(), store.InstanceQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, inst := range all.Instances {
			got = append(got, inst.ID)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("instances %q, want %q", got, ids)
		}
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestPurge(t *testing.T) {
	pending := func(t *testing.T, h *fakehost.Host) {
		if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"x"`), "pending"); err != nil {
			t.Fatal(err)
		}
	}
	runTests(t, []cliTest{
		{
			name:       "finished",
			args:       []string{"purge", "done"},
			wantStdout: "purged done\n",
			check:      instances(),
		},
		{
			name:       "--json",
			args:       []string{"purge", "done", "--json"},
			wantStdout: "{\n  \"id\": \"done\"\n}\n",
			check:      instances(),
		},
		{
			name:       "not finished",
			setup:      pending,
			args:       []string{"purge", "pending"},
			wantCode:   1,
			wantStderr: "durabox: purge: instance not finished: \"pending\" has not ended; cancel or terminate it, or wait for it to end, then purge it\n",
			check:      instances("pending", "done"),
		},
		{
			name:       "unknown instance",
			args:       []string{"purge", "nope"},
			wantCode:   1,
			wantStderr: "durabox: purge: instance not found: \"nope\"\n",
			check:      instances("done"),
		},
		{
			name: "the host fails",
			setup: func(t *testing.T, h *fakehost.Host) {
				h.Fail("Purge", errors.New("host: purge \"done\": disk full"))
			},
			args:       []string{"purge", "done"},
			wantCode:   1,
			wantStderr: "durabox: purge: purge \"done\": disk full\n",
			check:      instances("done"),
		},
		{
			name:       "neither an id nor a filter",
			args:       []string{"purge"},
			wantCode:   2,
			wantStderr: "durabox purge: say what to purge: an instance ID, or flags such as --status Completed --before 2026-01-01\n", wantUsage: true,
		},
		{
			name:       "an id and a filter",
			args:       []string{"purge", "done", "--status", "Completed"},
			wantCode:   2,
			wantStderr: "durabox purge: give an instance ID or the flags that select instances, not both\n", wantUsage: true,
			check: instances("done"),
		},
		{
			name:       "by filter",
			setup:      pending,
			args:       []string{"purge", "--status", "completed,Failed", "--before", "2026-01-01", "--name", "Greeting", "--module", "5c47"},
			wantStdout: "purged 1 instance\n",
			check: func(t *testing.T, h *fakehost.Host) {
				want := store.InstanceFilter{Statuses: []engine.Status{engine.StatusCompleted, engine.StatusFailed}, Name: "Greeting", ModuleHash: hash,
					FinishedBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				if got := h.Filter(); !reflect.DeepEqual(got, want) {
					t.Errorf("filter %+v, want %+v", got, want)
				}
				instances("pending")(t, h)
			},
		},
		{
			name:       "by filter, a dry run",
			args:       []string{"purge", "--status", "Completed", "--dry-run"},
			wantStdout: "1 instance would be purged (a dry run: none was)\n",
			check:      instances("done"),
		},
		{
			name:       "by filter --json",
			args:       []string{"purge", "--created-before", "2030-01-02T03:04:05Z", "--json"},
			wantStdout: "{\n  \"purged\": 1\n}\n",
			check:      instances(),
		},
		{
			name:       "a status that is none",
			args:       []string{"purge", "--status", "Done"},
			wantCode:   2,
			wantStderr: "durabox purge: invalid value \"Done\" for flag --status: \"Done\" is not a status; it is one of Pending,Running,Completed,Failed,Canceled,Terminated\n", wantUsage: true,
		},
		{
			name:       "a time that is none",
			args:       []string{"purge", "--before", "soon"},
			wantCode:   2,
			wantStderr: "durabox purge: invalid value \"soon\" for flag --before: \"soon\" is not a time (2026-01-02T15:04:05Z), a date (2026-01-02, in UTC), or a duration ago (24h)\n", wantUsage: true,
		},
		{
			name:       "a module no one deployed",
			args:       []string{"purge", "--module", "abc"},
			wantCode:   1,
			wantStderr: "durabox: no deployed module has a hash that begins with \"abc\" (--module); `durabox modules` lists them\n",
		},
	})
}
