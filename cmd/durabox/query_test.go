package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/durabox/durabox/host/client/fakehost"
)

// withQueries gives every instance the query Progress, which answers with
// the instance's id and its argument, and Refuse, which fails.
func withQueries(t *testing.T, h *fakehost.Host) {
	t.Helper()
	h.HandleQuery("Progress", func(id string, data json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"id":%q,"asked":%s}`, id, data)), nil
	})
	h.HandleQuery("Refuse", func(string, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("not now") })
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestQuery(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "answered, indented",
			setup:      withQueries,
			args:       []string{"query", "done", "Progress", "--data", `{"detail":true}`},
			wantStdout: "{\n  \"id\": \"done\",\n  \"asked\": {\n    \"detail\": true\n  }\n}\n",
		},
		{
			name:       "--json, the argument null by default",
			setup:      withQueries,
			args:       []string{"query", "done", "Progress", "--json"},
			wantStdout: "{\n  \"result\": {\n    \"id\": \"done\",\n    \"asked\": null\n  }\n}\n",
		},
		{
			name:       "the argument from stdin",
			setup:      withQueries,
			args:       []string{"query", "done", "Progress", "--data", "-"},
			stdin:      `7`,
			wantStdout: "{\n  \"id\": \"done\",\n  \"asked\": 7\n}\n",
		},
		{
			name:       "a handler that fails",
			setup:      withQueries,
			args:       []string{"query", "done", "Refuse"},
			wantCode:   1,
			wantStderr: "durabox: query: query failed: query \"Refuse\" of \"done\": not now\n",
		},
		{
			name:       "a query the instance does not handle",
			setup:      withQueries,
			args:       []string{"query", "done", "Nope"},
			wantCode:   1,
			wantStderr: "durabox: query: no such query: \"done\" handles no query \"Nope\"; it handles [\"Progress\" \"Refuse\"]\n",
		},
		{
			name:       "an unknown instance",
			setup:      withQueries,
			args:       []string{"query", "nope", "Progress"},
			wantCode:   1,
			wantStderr: "durabox: query: instance not found: \"nope\"\n",
		},
		{
			name:       "an argument that is not JSON",
			args:       []string{"query", "done", "Progress", "--data", "yes"},
			wantCode:   2,
			wantStderr: `durabox query: --data is not valid JSON: invalid character 'y' looking for beginning of value (strings need quotes: --data '"yes"')` + "\n",
			wantUsage:  true,
		},
	})
}
