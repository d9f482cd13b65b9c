package main

import (
	"context"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/client/fakehost"
)

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestStart(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:       "start",
			args:       []string{"start", "Greeting", "--input", `"you"`},
			wantStdout: "inst2\n",
			check:      wantInstance("inst2", "Pending", `"you"`),
		},
		{
			name:       "flags first",
			args:       []string{"start", "--input", `{"who": ["you", 2]}`, "Greeting"},
			wantStdout: "inst2\n",
			check:      wantInstance("inst2", "Pending", `{"who":["you",2]}`),
		},
		{
			name:       "no input",
			args:       []string{"start", "Greeting"},
			wantStdout: "inst2\n",
			check:      wantInstance("inst2", "Pending", `null`),
		},
		{
			name:       "--id and --json",
			args:       []string{"start", "Greeting", "--id", "mine", "--json"},
			wantStdout: "{\n  \"id\": \"mine\"\n}\n",
			check:      wantInstance("mine", "Pending", `null`),
		},
		{
			name:       "--wait",
			args:       []string{"start", "Greeting", "--input", `"you"`, "--wait"},
			wantStdout: "inst2\nCompleted\n\"Hello, you!\"\n",
		},
		{
			name:       "--wait for a failure",
			args:       []string{"start", "Fails", "--wait"},
			wantCode:   1,
			wantStdout: "inst2\nFailed\n",
			wantStderr: "durabox: start: instance inst2 ended Failed: boom\n",
		},
		{
			name: "--wait --json",
			args: []string{"start", "Greeting", "--input", `"you"`, "--wait", "--json"},
			wantStdout: `{
  "id": "inst2",
  "name": "Greeting",
  "moduleHash": "` + hash + `",
  "executionId": 1,
  "status": "Completed",
  "input": "you",
  "result": "Hello, you!",
  "createdAt": "2025-01-02T03:04:09Z",
  "updatedAt": "2025-01-02T03:04:10Z"
}
`,
		},
		{
			name:     "--wait --json for a failure",
			args:     []string{"start", "Fails", "--wait", "--json", "--id", "f"},
			wantCode: 1,
			wantStdout: `{
  "id": "f",
  "name": "Fails",
  "moduleHash": "` + hash + `",
  "executionId": 1,
  "status": "Failed",
  "input": null,
  "failure": {
    "message": "boom"
  },
  "createdAt": "2025-01-02T03:04:09Z",
  "updatedAt": "2025-01-02T03:04:10Z"
}
`,
			wantStderr: "durabox: start: instance f ended Failed: boom\n",
		},
		{
			name:       "an unknown orchestration",
			args:       []string{"start", "Nope"},
			wantCode:   1,
			wantStderr: "durabox: start: unknown orchestration \"Nope\": no deployed module registers it\n",
		},
		{
			name:       "a name after --",
			args:       []string{"start", "--", "--wait"},
			wantCode:   1,
			wantStderr: "durabox: start: unknown orchestration \"--wait\": no deployed module registers it\n",
		},
		{
			name:       "an id taken",
			args:       []string{"start", "Greeting", "--id", "done"},
			wantCode:   1,
			wantStderr: "durabox: start: instance already exists: \"done\"\n",
		},
		{
			name:       "input without quotes",
			args:       []string{"start", "Greeting", "--input", "world"},
			wantCode:   2,
			wantStderr: "durabox start: --input is not valid JSON: invalid character 'w' looking for beginning of value (strings need quotes: --input '\"world\"')\n", wantUsage: true,
			check: wantNoInstance("inst2"),
		},
		{
			name:       "input with a name twice",
			args:       []string{"start", "Greeting", "--input", `{"who":"ada","who":"bob"}`},
			wantCode:   1,
			wantStderr: `durabox: start: bad input: the request body is not I-JSON (RFC 7493): the name "who" appears twice in one object` + "\n",
			check:      wantNoInstance("inst2"),
		},
		{
			name:       "input cut short",
			args:       []string{"start", "Greeting", "--input", `{"who":`},
			wantCode:   2,
			wantStderr: "durabox start: --input is not valid JSON: unexpected end of JSON input\n", wantUsage: true,
		},
		{
			name:       "empty input",
			args:       []string{"start", "Greeting", "--input", ""},
			wantCode:   2,
			wantStderr: "durabox start: --input is not valid JSON: unexpected end of JSON input (strings need quotes: --input '\"\"')\n", wantUsage: true,
		},
		{
			name:       "--input-file",
			setup:      withFile("input.json", bigInput),
			args:       []string{"start", "Greeting", "--input-file", "input.json"},
			wantStdout: "inst2\n",
			check:      wantInstance("inst2", "Pending", bigInput),
		},
		{
			name:       "--input - reads stdin",
			args:       []string{"start", "Greeting", "--input", "-"},
			stdin:      bigInput,
			wantStdout: "inst2\n",
			check:      wantInstance("inst2", "Pending", bigInput),
		},
		{
			name:       "--input and --input-file",
			setup:      withFile("input.json", `"file"`),
			args:       []string{"start", "Greeting", "--input", `"flag"`, "--input-file", "input.json"},
			wantCode:   2,
			wantStderr: "durabox start: --input and --input-file both give it; give one\n", wantUsage: true,
			check: wantNoInstance("inst2"),
		},
		{
			name:       "--input-file missing",
			args:       []string{"start", "Greeting", "--input-file", "nope.json"},
			wantCode:   1,
			wantStderr: "durabox: --input-file: open nope.json: no such file or directory\n",
			check:      wantNoInstance("inst2"),
		},
		{
			name:       "--input-file not JSON",
			setup:      withFile("input.json", "world"),
			args:       []string{"start", "Greeting", "--input-file", "input.json"},
			wantCode:   2,
			wantStderr: "durabox start: --input-file input.json is not valid JSON: invalid character 'w' looking for beginning of value\n", wantUsage: true,
			check: wantNoInstance("inst2"),
		},
		{
			name:       "no name",
			args:       []string{"start", "--wait"},
			wantCode:   2,
			wantStderr: "durabox start: missing NAME\n", wantUsage: true,
		},
		{
			name:       "two names",
			args:       []string{"start", "Greeting", "Farewell"},
			wantCode:   2,
			wantStderr: "durabox start: unexpected argument \"Farewell\"\n", wantUsage: true,
		},
		{
			name:       "an unknown flag",
			args:       []string{"start", "Greeting", "--inptu", "1"},
			wantCode:   2,
			wantStderr: "durabox start: flag provided but not defined: --inptu\n", wantUsage: true,
		},
		{
			name:       "a flag without its value",
			args:       []string{"start", "Greeting", "--input"},
			wantCode:   2,
			wantStderr: "durabox start: flag needs an argument: --input\n", wantUsage: true,
		},
	})
}

// bigInput is an input larger than a command line may hold (Linux takes
// 128 KiB in one argument).
var bigInput = `"` + strings.Repeat("x", 1<<20) + `"`

// withFile writes a file in the test's directory.
func withFile(name, content string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, _ *fakehost.Host) { writeFile(t, name, []byte(content)) }
}

// wantInstance checks an instance's status and input.
func wantInstance(id, status, input string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		inst, err := h.Instance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if string(inst.Status) != status || string(inst.Input) != input {
			t.Errorf("instance %s is %s with input %s, want %s with input %s", id, inst.Status, inst.Input, status, input)
		}
	}
}

func wantNoInstance(id string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if _, err := h.Instance(context.Background(), id); err == nil {
			t.Errorf("instance %s exists", id)
		}
	}
}
