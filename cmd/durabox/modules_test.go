package main

import (
	"context"
	"testing"

	"github.com/durabox/durabox/host/client/fakehost"
)

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestModules(t *testing.T) {
	// another deploys a second module, "x", which no instance runs on.
	another := func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if _, err := h.Deploy(context.Background(), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// withEnv deploys "x" with environment variables.
	withEnv := func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if _, err := h.DeployWithEnv(context.Background(), []byte("x"), []string{"REGION=eu", "API_KEY=secret-value"}); err != nil {
			t.Fatal(err)
		}
	}
	modules := func(want int) func(*testing.T, *fakehost.Host) {
		return func(t *testing.T, h *fakehost.Host) {
			t.Helper()
			if mods, _ := h.Modules(context.Background()); len(mods) != want {
				t.Errorf("%d modules, want %d", len(mods), want)
			}
		}
	}
	runTests(t, []cliTest{
		{
			name:  "list",
			setup: another,
			args:  []string{"modules"},
			wantStdout: `HASH          DEPLOYED                  ORCHESTRATIONS   INSTANCES    ENV
2d711642b726  2025-01-02T03:04:09.000Z  Fails, Greeting  none         none
5c471d4fcbf9  2025-01-02T03:04:06.000Z  Fails, Greeting  1 Completed  none
`,
		},
		{
			// The names of a module's environment variables, never their
			// values (docs/operator.md: "modules shows their names").
			name:  "environment variables",
			setup: withEnv,
			args:  []string{"modules"},
			wantStdout: `HASH          DEPLOYED                  ORCHESTRATIONS   INSTANCES    ENV
2d711642b726  2025-01-02T03:04:09.000Z  Fails, Greeting  none         REGION, API_KEY
5c471d4fcbf9  2025-01-02T03:04:06.000Z  Fails, Greeting  1 Completed  none
`,
		},
		{
			name:  "a module the host cannot run",
			setup: refused("w"),
			args:  []string{"modules"},
			wantStdout: `HASH          DEPLOYED                  ORCHESTRATIONS   INSTANCES               ENV
5c471d4fcbf9  2025-01-02T03:04:06.000Z  Fails, Greeting  1 Pending, 1 Completed  none
this host cannot run the module 5c471d4fcbf9: sandbox: wasmtime runs only modules whose loops the sandbox can count; its instances and activities wait for a host that can run it
`,
		},
		{
			name:       "none",
			empty:      true,
			args:       []string{"modules"},
			wantStdout: "no modules; deploy one with `durabox deploy FILE.wasm`\n",
		},
		{
			name: "--json",
			args: []string{"modules", "--json"},
			wantStdout: `{
  "modules": [
    {
      "hash": "` + hash + `",
      "orchestrations": [
        "Fails",
        "Greeting"
      ],
      "activities": [],
      "deployedAt": "2025-01-02T03:04:06Z",
      "instances": {
        "Completed": 1
      }
    }
  ]
}
`,
		},
		{
			name:       "rm",
			setup:      another,
			args:       []string{"modules", "rm", "2d7116"},
			wantStdout: "removed 2d711642b726  orchestrations: Fails, Greeting\n",
			check:      modules(1),
		},
		{
			name:       "rm a module in use",
			args:       []string{"modules", "rm", "5c47"},
			wantCode:   1,
			wantStderr: "durabox: remove module: module in use: instances run on it\n",
			check:      modules(1),
		},
		{
			name:       "rm an ambiguous hash",
			setup:      another,
			args:       []string{"modules", "rm", ""},
			wantCode:   2,
			wantStderr: "durabox modules: HASH is empty; give a module's hash\n", wantUsage: true,
			check: modules(2),
		},
		{
			name:       "rm without a hash",
			args:       []string{"modules", "rm"},
			wantCode:   2,
			wantStderr: "durabox modules: missing HASH: say which module to remove\n", wantUsage: true,
		},
		{
			name:       "another word",
			args:       []string{"modules", "delete", "5c47"},
			wantCode:   2,
			wantStderr: "durabox modules: unexpected argument \"delete\"; did you mean rm?\n", wantUsage: true,
		},
		{
			name:       "too many words",
			args:       []string{"modules", "rm", "5c47", "2d71"},
			wantCode:   2,
			wantStderr: "durabox modules: unexpected argument \"2d71\"\n", wantUsage: true,
		},
	})
}
