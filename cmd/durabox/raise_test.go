package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
)

func raisedWith(want ...api.RaiseRequest) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if got := h.Raised(); !reflect.DeepEqual(got, want) {
			t.Errorf("raised %+v, want %+v", got, want)
		}
	}
}

// running starts the instance "running" (Pending, in the fake).
func running(t *testing.T, h *fakehost.Host) {
	t.Helper()
	if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"x"`), "running"); err != nil {
		t.Fatal(err)
	}
}

// requested checks the cancellations and terminations the host took.
func requested(want ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if got := h.Cancelled(); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Errorf("requests %q, want %q", got, want)
		}
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestRaise(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "positional",
			setup:      running,
			args:       []string{"raise", "running", "Approve", "--data", `{"by":"ada"}`},
			wantStdout: "raised event Approve for running\n",
			check:      raisedWith(api.RaiseRequest{Name: "Approve", Data: json.RawMessage(`{"by":"ada"}`)}),
		},
		{
			name:       "persistent, data null by default",
			setup:      running,
			args:       []string{"raise", "running", "Ping", "--persistent"},
			wantStdout: "raised persistent event Ping for running\n",
			check:      raisedWith(api.RaiseRequest{Name: "Ping", Data: json.RawMessage(`null`), Persistent: true}),
		},
		{
			name:       "for a finished instance",
			args:       []string{"raise", "done", "Approve"},
			wantCode:   1,
			wantStderr: "durabox: raise: instance finished: \"done\" is Completed; nothing more can happen to it\n",
			check:      raisedWith(),
		},
		{
			name:       "data that is not JSON",
			args:       []string{"raise", "done", "Approve", "--data", "yes"},
			wantCode:   2,
			wantStderr: `durabox raise: --data is not valid JSON: invalid character 'y' looking for beginning of value (strings need quotes: --data '"yes"')` + "\n",
			wantUsage:  true,
			check:      raisedWith(),
		},
		{
			name:       "unknown instance",
			args:       []string{"raise", "nope", "Approve"},
			wantCode:   1,
			wantStderr: "durabox: raise: instance not found: \"nope\"\n",
			check:      raisedWith(),
		},
		{
			// JSON would carry it as U+FFFD, and the host would take it.
			name:       "a name that is not UTF-8",
			setup:      running,
			args:       []string{"raise", "running", "Appr\xffove"},
			wantCode:   2,
			wantStderr: `durabox raise: event name "Appr\xffove" is not valid UTF-8 (at byte 4): a name is 1 to 256 bytes of UTF-8 without control characters` + "\n",
			wantUsage:  true,
			check:      raisedWith(),
		},
		{
			name:       "data with a name twice",
			setup:      running,
			args:       []string{"raise", "running", "Approve", "--data", `{"by":"ada","by":"bob"}`},
			wantCode:   1,
			wantStderr: `durabox: raise: bad input: the request body is not I-JSON (RFC 7493): the name "by" appears twice in one object` + "\n",
			check:      raisedWith(),
		},
		{
			name:       "data with a lone surrogate",
			setup:      running,
			args:       []string{"raise", "running", "Approve", "--data", `"\ud800"`},
			wantCode:   1,
			wantStderr: "durabox: raise: bad input: the request body is not I-JSON (RFC 7493): invalid surrogate pair `\\ud800\"}` in string at byte 26\n",
			check:      raisedWith(),
		},
	})
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestCancel(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "with a reason",
			setup:      running,
			args:       []string{"cancel", "running", "--reason", "withdrawn"},
			wantStdout: "cancellation of running requested\n",
			check:      requested("running: withdrawn"),
		},
		{
			name:       "a finished instance",
			args:       []string{"cancel", "done"},
			wantCode:   1,
			wantStderr: "durabox: cancel: instance finished: \"done\" is Completed; nothing more can happen to it\n",
			check:      requested(),
		},
		{
			name:       "unknown instance",
			args:       []string{"cancel", "nope"},
			wantCode:   1,
			wantStderr: "durabox: cancel: instance not found: \"nope\"\n",
		},
		{
			name:       "a reason too long",
			setup:      running,
			args:       []string{"cancel", "running", "--reason", strings.Repeat("r", 2000)},
			wantCode:   2,
			wantStderr: `durabox cancel: cancel reason "` + strings.Repeat("r", 64) + `"… is 2000 bytes: a reason is at most 1024 bytes of UTF-8` + "\n",
			wantUsage:  true,
			check:      requested(),
		},
	})
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestTerminate(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "with a reason",
			setup:      running,
			args:       []string{"terminate", "running", "--reason", "stuck"},
			wantStdout: "termination of running requested\n",
			check:      requested("terminate running: stuck"),
		},
		{
			name:       "--json",
			setup:      running,
			args:       []string{"terminate", "running", "--json"},
			wantStdout: "{\n  \"id\": \"running\",\n  \"reason\": \"\"\n}\n",
			check:      requested("terminate running: "),
		},
		{
			name:       "a finished instance",
			args:       []string{"terminate", "done"},
			wantCode:   1,
			wantStderr: "durabox: terminate: instance finished: \"done\" is Completed; nothing more can happen to it\n",
			check:      requested(),
		},
		{
			name:       "no id",
			args:       []string{"terminate"},
			wantCode:   2,
			wantStderr: "durabox terminate: missing ID\n", wantUsage: true,
		},
	})
}
