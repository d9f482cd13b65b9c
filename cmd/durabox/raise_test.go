package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/client/fakehost"
)

func raisedWith(want ...client.RaiseRequest) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if got := h.Raised(); !reflect.DeepEqual(got, want) {
			t.Errorf("raised %+v, want %+v", got, want)
		}
	}
}

func TestRaise(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "positional",
			args:       []string{"raise", "done", "Approve", "--data", `{"by":"ada"}`},
			wantStdout: "raised event Approve for done\n",
			check:      raisedWith(client.RaiseRequest{Name: "Approve", Data: json.RawMessage(`{"by":"ada"}`)}),
		},
		{
			name:       "persistent, data null by default",
			args:       []string{"raise", "done", "Ping", "--persistent"},
			wantStdout: "raised persistent event Ping for done\n",
			check:      raisedWith(client.RaiseRequest{Name: "Ping", Data: json.RawMessage(`null`), Persistent: true}),
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
	})
}

func TestCancel(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "with a reason",
			args:       []string{"cancel", "done", "--reason", "withdrawn"},
			wantStdout: "cancellation of done requested\n",
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.Cancelled(); !reflect.DeepEqual(got, []string{"done: withdrawn"}) {
					t.Errorf("cancelled %q", got)
				}
			},
		},
		{
			name:       "unknown instance",
			args:       []string{"cancel", "nope"},
			wantCode:   1,
			wantStderr: "durabox: cancel: instance not found: \"nope\"\n",
		},
	})
}
