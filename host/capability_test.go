package host_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// Activities reach the outside world only through what the host grants: HTTP
// to the hosts on its allow-list, and the environment variables deployed
// with their module. Orchestrations get neither.
func TestActivityCapabilities(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		fmt.Fprint(w, "hello from loopback")
	}))
	defer srv.Close()
	allowed, _ := url.Parse(srv.URL)
	// The same server under another name, which is not on the list.
	offList := "localhost:" + allowed.Port()

	h := startHost(t, host.Options{HTTPAllowList: []string{allowed.Host}})
	wasm, err := guestbuild.Wasm("host/testdata/guests/netuse")
	if err != nil {
		t.Fatal(err)
	}
	// A refusal names the variable, never its value: a secret.
	for _, bad := range []struct{ kv, want string }{
		{"NOEQUALS", "environment variable 2 is not of the form KEY=value"},
		{"=value", "environment variable 2 is not of the form KEY=value"},
		{"KEY=a\x00b", `environment variable "KEY" is not UTF-8 text without NUL`},
		{"KEY=\xffsecret", `environment variable "KEY" is not UTF-8 text without NUL`},
	} {
		_, err := h.DeployWithEnv(context.Background(), wasm, []string{"FINE=1", bad.kv})
		if !errors.Is(err, api.ErrBadInput) || !strings.HasSuffix(err.Error(), bad.want) {
			t.Fatalf("deploy with %q: %v, want %s", bad.kv, err, bad.want)
		}
	}
	info, err := h.DeployWithEnv(context.Background(), wasm, []string{"GREETING=hi there"})
	if err != nil || len(info.Env) != 1 {
		t.Fatalf("deploy: %+v, %v", info, err)
	}

	tests := []struct {
		name, orchestration, input string
		wantResult, wantFailure    string
	}{
		{"activity on the allow-list", "Fetch", `"` + srv.URL + `/x"`, `"200 yes hello from loopback"`, ""},
		{"activity off the allow-list", "Fetch", `"http://` + offList + `/x"`, "",
			`activity "Fetch" failed: Get "http://` + offList + `/x": durabox: HTTP request to ` + offList + ` refused: the host is not on the allow-list; start durabox serve with --allow-http ` + offList},
		{"orchestration", "FetchDirectly", `"` + srv.URL + `/x"`, "",
			`Get "` + srv.URL + `/x": durabox: orchestrations cannot make HTTP requests, which would not replay; make the request in an activity`},
		{"environment: the activity sees it, the orchestration does not", "Getenv", `"GREETING"`, `["hi there",""]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := h.run(t, tt.orchestration, tt.input)
			if tt.wantFailure != "" {
				if inst.Status != engine.StatusFailed || inst.Failure.Message != tt.wantFailure {
					t.Fatalf("status %s failure %+v\nwant %s", inst.Status, inst.Failure, tt.wantFailure)
				}
				return
			}
			if inst.Status != engine.StatusCompleted || string(inst.Result) != tt.wantResult {
				t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
			}
		})
	}
	// The activity instances that ran above are idle in the pool, made with
	// the old environment; none of them may answer now.
	t.Run("deploying again replaces the environment", func(t *testing.T) {
		if _, err := h.DeployWithEnv(context.Background(), wasm, []string{"GREETING=bye"}); err != nil {
			t.Fatal(err)
		}
		inst := h.run(t, "Getenv", `"GREETING"`)
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `["bye",""]` {
			t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
		}
	})
	t.Run("deploying again without an environment keeps it", func(t *testing.T) {
		info, err := h.Deploy(context.Background(), wasm)
		if err != nil || !slices.Equal(info.Env, []string{"GREETING=bye"}) {
			t.Fatalf("deploy: %+v, %v; want the environment kept", info, err)
		}
		inst := h.run(t, "Getenv", `"GREETING"`)
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `["bye",""]` {
			t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
		}
	})
	t.Run("deploying again with no environment clears it", func(t *testing.T) {
		if _, err := h.DeployWithEnv(context.Background(), wasm, nil); err != nil {
			t.Fatal(err)
		}
		inst := h.run(t, "Getenv", `"GREETING"`)
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `["",""]` {
			t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
		}
	})
}
