package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
)

// wantEnv checks the environment of the newest module.
func wantEnv(env ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		mods, _ := h.Modules(context.Background())
		if len(mods) == 0 || !slices.Equal(mods[0].Env, env) {
			t.Errorf("modules %+v; want the newest with environment %q", mods, env)
		}
	}
}

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestDeploy(t *testing.T) {
	writeModule := func(t *testing.T, h *fakehost.Host) {
		if err := os.WriteFile("hello.wasm", []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runTests(t, []cliTest{
		{
			name: "deploy", setup: writeModule,
			args:       []string{"deploy", "hello.wasm"},
			wantStdout: "deployed 2d711642b726  orchestrations: Fails, Greeting  activities: none\n",
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.Deployed(); len(got) != 2 || string(got[1]) != "x" {
					t.Errorf("deployed %q, want the fixture's module and %q", got, "x")
				}
			},
		},
		{
			name: "deploy --json", setup: writeModule,
			args: []string{"deploy", "--json", "hello.wasm"},
			wantStdout: `{
  "hash": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
  "orchestrations": [
    "Fails",
    "Greeting"
  ],
  "activities": [],
  "deployedAt": "2025-01-02T03:04:09Z"
}
`,
		},
		{
			name: "deploy --env", setup: writeModule,
			args:       []string{"deploy", "--env", "GREETING=hi there", "--env", "TOKEN=s3cret=x", "hello.wasm"},
			wantStdout: "deployed 2d711642b726  orchestrations: Fails, Greeting  activities: none  env: GREETING, TOKEN\n",
			check:      wantEnv("GREETING=hi there", "TOKEN=s3cret=x"),
		},
		{
			name: "deploy again keeps the environment",
			setup: func(t *testing.T, h *fakehost.Host) {
				writeModule(t, h)
				h.DeployWithEnv(context.Background(), []byte("x"), []string{"KEPT=1"})
			},
			args:       []string{"deploy", "hello.wasm"},
			wantStdout: "deployed 2d711642b726  orchestrations: Fails, Greeting  activities: none  env: KEPT\n",
			check:      wantEnv("KEPT=1"),
		},
		{
			name: "deploy --env-clear",
			setup: func(t *testing.T, h *fakehost.Host) {
				writeModule(t, h)
				h.DeployWithEnv(context.Background(), []byte("x"), []string{"GONE=1"})
			},
			args:       []string{"deploy", "hello.wasm", "--env-clear"},
			wantStdout: "deployed 2d711642b726  orchestrations: Fails, Greeting  activities: none\n",
			check:      wantEnv(),
		},
		{
			name: "--env and --env-clear", setup: writeModule,
			args:       []string{"deploy", "hello.wasm", "--env-clear", "--env", "A=1"},
			wantCode:   2,
			wantStderr: "durabox deploy: --env replaces the whole environment already; --env-clear is for removing it\n", wantUsage: true,
		},
		{
			name: "--env without =", setup: writeModule,
			args:       []string{"deploy", "--env", "GREETING", "hello.wasm"},
			wantCode:   2,
			wantStderr: `durabox deploy: invalid value "GREETING" for flag --env: "GREETING" is not of the form KEY=VALUE` + "\n", wantUsage: true,
		},
		{
			name: "refused",
			setup: func(t *testing.T, h *fakehost.Host) {
				writeModule(t, h)
				h.Fail("Deploy", fmt.Errorf("%w: the file is not a WebAssembly module", api.ErrBadModule))
			},
			args:       []string{"deploy", "hello.wasm"},
			wantCode:   1,
			wantStderr: "durabox: deploy: module refused: the file is not a WebAssembly module\n",
		},
		{
			name:       "no such file",
			args:       []string{"deploy", "nope.wasm"},
			wantCode:   1,
			wantStderr: "durabox: deploy: open nope.wasm: no such file or directory\n",
		},
		{
			name:       "no file named",
			args:       []string{"deploy"},
			wantCode:   2,
			wantStderr: "durabox deploy: missing FILE.wasm\n", wantUsage: true,
		},
		{
			name:       "two files",
			args:       []string{"deploy", "a.wasm", "b.wasm"},
			wantCode:   2,
			wantStderr: "durabox deploy: unexpected argument \"b.wasm\"\n", wantUsage: true,
		},
	})
}
