package main

import (
	"encoding/json"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
)

// both runs the checks one after the other.
func both(checks ...func(*testing.T, *fakehost.Host)) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		for _, c := range checks {
			c(t, h)
		}
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestStartRaise(t *testing.T) {
	ping := api.RaiseRequest{Name: "Ping", Data: json.RawMessage(`{"n":1}`), Persistent: true}
	runTests(t, []cliTest{
		{
			name:       "a new instance",
			args:       []string{"start", "Greeting", "--id", "fresh", "--raise", "Ping", "--data", `{"n":1}`, "--persistent", "--json"},
			wantStdout: "{\n  \"id\": \"fresh\",\n  \"started\": true\n}\n",
			check:      both(wantInstance("fresh", "Pending", "null"), raisedWith(ping)),
		},
		{
			name:       "an instance there",
			setup:      running,
			args:       []string{"start", "Greeting", "--id", "running", "--raise", "Ping", "--data", `{"n":1}`, "--persistent"},
			wantStdout: "running\n",
			wantStderr: "durabox: running exists: the event Ping was raised at it, and nothing started\n",
			check:      both(wantInstance("running", "Pending", `"x"`), raisedWith(ping)),
		},
		{
			name:       "a finished instance",
			args:       []string{"start", "Greeting", "--id", "done", "--raise", "Ping"},
			wantCode:   1,
			wantStderr: "durabox: start: instance finished: \"done\" is Completed; nothing more can happen to it\n",
			check:      raisedWith(),
		},
		{
			name:       "--raise without --id",
			args:       []string{"start", "Greeting", "--raise", "Ping"},
			wantCode:   2,
			wantStderr: "durabox start: --raise needs --id: the instance to start, or to raise the event at if it exists\n", wantUsage: true,
			check: wantNoInstance("inst2"),
		},
		{
			name:       "--data without --raise",
			args:       []string{"start", "Greeting", "--data", "1"},
			wantCode:   2,
			wantStderr: "durabox start: --data is for --raise or --update\n", wantUsage: true,
			check: wantNoInstance("inst2"),
		},
	})
}
