package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
)

// withUpdates starts the instance "running" and gives every instance the
// update Add, which answers with the instance's id and its argument, and
// Fail, which fails.
func withUpdates(t *testing.T, h *fakehost.Host) {
	t.Helper()
	running(t, h)
	h.HandleUpdate("Add", func(id string, data json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"id":%q,"added":%s}`, id, data)), nil
	})
	h.HandleUpdate("Fail", func(string, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("out of stock") })
}

// updatedOnce checks that the update add-1 of "running" was answered
// with its first argument, 1.
func updatedOnce(t *testing.T, h *fakehost.Host) {
	t.Helper()
	u, err := h.AwaitUpdate(context.Background(), "running", "add-1", 0)
	if err != nil || string(u.Input) != `1` {
		t.Errorf("update add-1: %+v, %v; want its first argument, 1", u, err)
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestUpdate(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "answered",
			setup:      withUpdates,
			args:       []string{"update", "running", "Add", "--data", `{"sku":"A-7"}`},
			wantStdout: "{\"id\":\"running\",\"added\":{\"sku\":\"A-7\"}}\n",
		},
		{
			name: "sent twice with one id: the first answer",
			setup: func(t *testing.T, h *fakehost.Host) {
				withUpdates(t, h)
				if _, err := h.Update(context.Background(), "running", api.UpdateRequest{Name: "Add", Data: json.RawMessage(`1`), ID: "add-1"}, 0); err != nil {
					t.Fatal(err)
				}
			},
			args:       []string{"update", "running", "Add", "--data", `2`, "--update-id", "add-1"},
			wantStdout: "{\"id\":\"running\",\"added\":1}\n",
			check:      updatedOnce,
		},
		{
			name:       "a handler that fails",
			setup:      withUpdates,
			args:       []string{"update", "running", "Fail", "--update-id", "f1"},
			wantCode:   1,
			wantStderr: "durabox: update: update Fail (f1) of instance running failed: out of stock\n",
		},
		{
			name:       "refused",
			setup:      withUpdates,
			args:       []string{"update", "running", "Nope", "--update-id", "n1"},
			wantCode:   1,
			wantStderr: "durabox: update: instance running refused update Nope (n1): the instance handles no update \"Nope\" (it handles [\"Add\" \"Fail\"]); nothing of it was written\n",
		},
		{
			name:       "update with start",
			setup:      withUpdates,
			args:       []string{"start", "Greeting", "--id", "new", "--update", "Add", "--data", `3`},
			wantStdout: "{\"id\":\"new\",\"added\":3}\n",
		},
		{
			name:       "update with start of an instance there",
			setup:      withUpdates,
			args:       []string{"start", "Greeting", "--id", "running", "--update", "Add"},
			wantStdout: "{\"id\":\"running\",\"added\":null}\n",
			wantStderr: "durabox: running exists: the update Add was sent to it, and nothing started\n",
		},
		{
			name:       "update with start needs an id",
			setup:      withUpdates,
			args:       []string{"start", "Greeting", "--update", "Add"},
			wantCode:   2,
			wantStderr: "durabox start: --update needs --id: the instance to start, or to update if it exists\n",
			wantUsage:  true,
		},
		{
			name:       "--update-id without --update",
			setup:      withUpdates,
			args:       []string{"start", "Greeting", "--update-id", "x"},
			wantCode:   2,
			wantStderr: "durabox start: --update-id is for --update\n",
			wantUsage:  true,
		},
		{
			name:       "a bad update name",
			setup:      withUpdates,
			args:       []string{"update", "running", ""},
			wantCode:   2,
			wantStderr: "durabox update: update name \"\" is empty: a name is 1 to 256 bytes of UTF-8 without control characters\n",
			wantUsage:  true,
		},
	})
}
