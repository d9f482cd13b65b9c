package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/durabox/durabox/host/client/fakehost"
)

// instances returns a check that the host's instances are ids, newest
// first.
func instances(ids ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		all, err := h.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, inst := range all {
			got = append(got, inst.ID)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("instances %q, want %q", got, ids)
		}
	}
}

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
			wantStderr: "durabox: purge: instance not finished: \"pending\" has not ended; cancel it or wait for it to end, then purge it\n",
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
			name:       "no id",
			args:       []string{"purge"},
			wantCode:   2,
			wantStderr: "durabox purge: missing ID\n", wantUsage: true,
		},
	})
}
