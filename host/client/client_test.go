package client_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
)

// hash is the sha256 of "\x00asm fake", the module every test deploys.
const hash = "5c471d4fcbf930ec41c5276151aa1d4572fe3176288e2a0a117f9b677c4e1bc5"

func at(sec int) time.Time { return time.Date(2025, 1, 2, 3, 4, sec, 0, time.UTC) }

// newHost returns a fake host behind the real handler, with the module
// deployed (at 03:04:06) and the instance "done" completed
// (Greeting("world"), at 03:04:07 and 08), and a client of it. Its
// orchestration Later runs on its third wait; polls counts the waits.
func newHost(t *testing.T) (*fakehost.Host, *client.Client, *int) {
	t.Helper()
	h, polls := newFake(t)
	srv := httptest.NewServer(h.Handler(server.Options{Token: adminToken, ReadToken: readToken}))
	t.Cleanup(srv.Close)
	return h, client.New(srv.URL+"/", &client.Options{HTTPClient: srv.Client(), Token: adminToken}), polls
}

// newFake returns the fake host of newHost, without a server.
func newFake(t *testing.T) (*fakehost.Host, *int) {
	t.Helper()
	polls := 0
	h := fakehost.New(map[string]fakehost.Orchestration{
		"Greeting": fakehost.Greeting,
		"Later": func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
			if polls++; polls < 3 {
				return nil, fakehost.ErrStillRunning
			}
			return json.RawMessage(`"later"`), nil
		},
	})
	ctx := context.Background()
	if _, err := h.Deploy(ctx, []byte("\x00asm fake")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, "Greeting", json.RawMessage(`"world"`), "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	return h, &polls
}

// The tokens of the tests' hosts.
const (
	adminToken = "admin-0123456789abcdef"
	readToken  = "read-0123456789abcdef"
)

var (
	module = api.Module{Hash: hash, Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, DeployedAt: at(6),
		Instances: map[engine.Status]int{engine.StatusCompleted: 1}}
	doneSummary = api.InstanceSummary{ID: "done", Name: "Greeting", ModuleHash: hash, ExecutionID: 1, Status: engine.StatusCompleted, CreatedAt: at(7), UpdatedAt: at(8)}
	done        = api.Instance{
		ID: "done", Name: "Greeting", ModuleHash: hash, ExecutionID: 1, Status: engine.StatusCompleted,
		Input: json.RawMessage(`"world"`), Result: json.RawMessage(`"Hello, world!"`), CreatedAt: at(7), UpdatedAt: at(8),
	}
)

func TestClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(h *fakehost.Host)
		call    func(ctx context.Context, c *client.Client) (any, error)
		want    any
		wantErr string
		// wantStatus is the status of the *client.Error, if wantErr is one.
		wantStatus int
		// polls is how often Later ran.
		polls int
		// check, if set, looks at the host afterwards.
		check func(t *testing.T, h *fakehost.Host)
	}{
		{
			name: "deploy",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Deploy(ctx, []byte("x")) },
			want: api.Module{Hash: "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, DeployedAt: at(9)},
		},
		{
			name:    "deploy refused",
			setup:   func(h *fakehost.Host) { h.Fail("Deploy", fmt.Errorf("%w: not wasm", api.ErrBadModule)) },
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.Deploy(ctx, []byte("x")) },
			want:    api.Module{},
			wantErr: "durabox: deploy: module refused: not wasm", wantStatus: 422,
		},
		{
			name: "modules",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Modules(ctx) },
			want: []api.Module{module},
		},
		{
			name: "start",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, api.StartRequest{Name: "Greeting", Input: json.RawMessage(`"you"`)})
			},
			want: "inst2",
		},
		{
			name: "start with an id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, api.StartRequest{Name: "Greeting", ID: "mine"})
			},
			want: "mine",
		},
		{
			name: "start an unknown orchestration",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, api.StartRequest{Name: "Nope"})
			},
			want:    "",
			wantErr: `durabox: start: unknown orchestration "Nope": no deployed module registers it`, wantStatus: 422,
		},
		{
			name: "start with an id taken",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, api.StartRequest{Name: "Greeting", ID: "done"})
			},
			want:    "",
			wantErr: `durabox: start: instance already exists: "done"`, wantStatus: 409,
		},
		{
			name: "start with input that is not JSON",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, api.StartRequest{Name: "Greeting", Input: json.RawMessage(`world`)})
			},
			want:    "",
			wantErr: `durabox: start: encode the request: json: error calling MarshalJSON for type json.RawMessage: invalid character 'w' looking for beginning of value`,
		},
		{
			name: "instance",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Instance(ctx, "done") },
			want: done,
		},
		{
			name:    "instance not found",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.Instance(ctx, "a/b") },
			want:    api.Instance{},
			wantErr: `durabox: get instance: instance not found: "a/b"`, wantStatus: 404,
		},
		{
			name:    "instance without an id",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.Instance(ctx, "") },
			want:    api.Instance{},
			wantErr: `durabox: get instance: no such path: /v1/instances/; the API is described at /v1/openapi.json`, wantStatus: 404,
		},
		{
			name: "wait",
			setup: func(h *fakehost.Host) {
				h.Start(context.Background(), "Later", json.RawMessage(`null`), "later")
			},
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Wait(ctx, "later") },
			want: api.Instance{
				ID: "later", Name: "Later", ModuleHash: hash, ExecutionID: 1, Status: engine.StatusCompleted,
				Input: json.RawMessage(`null`), Result: json.RawMessage(`"later"`), CreatedAt: at(9), UpdatedAt: at(12),
			},
			polls: 3,
		},
		{
			name: "wait for what is done",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Wait(ctx, "done") },
			want: done,
		},
		{
			name:    "wait for an instance not found",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.Wait(ctx, "nope") },
			want:    api.Instance{},
			wantErr: `durabox: wait: instance not found: "nope"`, wantStatus: 404,
		},
		{
			name: "history",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.History(ctx, "done") },
			want: []engine.Event{
				{ID: 1, Kind: engine.OrchestrationStarted, Time: at(7), Name: "Greeting", InstanceID: "done", Input: json.RawMessage(`"world"`)},
				{ID: 2, Kind: engine.OrchestrationCompleted, Time: at(8), Result: json.RawMessage(`"Hello, world!"`)},
			},
		},
		{
			name:    "history not found",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.History(ctx, "nope") },
			want:    []engine.Event(nil),
			wantErr: `durabox: history: instance not found: "nope"`, wantStatus: 404,
		},
		{
			name: "purge",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				if err := c.Purge(ctx, "done"); err != nil {
					return nil, err
				}
				return c.List(ctx, client.ListRequest{})
			},
			want: api.InstancesResponse{Instances: []api.InstanceSummary{}},
		},
		{
			name: "purge by filter",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PurgeMatching(ctx, client.Filter{Statuses: []engine.Status{engine.StatusCompleted}, FinishedBefore: at(30)}, false)
			},
			want:  1,
			check: wantFilter(store.InstanceFilter{Statuses: []engine.Status{engine.StatusCompleted}, FinishedBefore: at(30)}),
		},
		{
			name: "purge by filter, a dry run",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PurgeMatching(ctx, client.Filter{Name: "Greeting", CreatedAfter: at(1)}, true)
			},
			want:  1,
			check: wantFilter(store.InstanceFilter{Name: "Greeting", CreatedAfter: at(1)}),
		},
		{
			name: "purge by no filter",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PurgeMatching(ctx, client.Filter{}, false)
			},
			want:    0,
			wantErr: "durabox: purge: bad input: say which finished instances to purge, with the filters of GET /v1/instances (status, finishedBefore, name, …); status=Completed&status=Failed&status=Canceled&status=Terminated takes them all", wantStatus: 400,
		},
		{
			name: "purge what has not finished",
			setup: func(h *fakehost.Host) {
				h.Start(context.Background(), "Later", json.RawMessage(`null`), "later")
			},
			call:    func(ctx context.Context, c *client.Client) (any, error) { return nil, c.Purge(ctx, "later") },
			want:    nil,
			wantErr: `durabox: purge: instance not finished: "later" has not ended; cancel or terminate it, or wait for it to end, then purge it`, wantStatus: 409,
		},
		{
			name:    "purge not found",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return nil, c.Purge(ctx, "nope") },
			want:    nil,
			wantErr: `durabox: purge: instance not found: "nope"`, wantStatus: 404,
		},
		{
			name: "list",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.List(ctx, client.ListRequest{}) },
			want: api.InstancesResponse{Instances: []api.InstanceSummary{doneSummary}},
		},
		{
			name: "list a page, with a filter",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.List(ctx, client.ListRequest{Filter: client.Filter{Statuses: []engine.Status{engine.StatusFailed, engine.StatusCompleted},
					Module: hash, IDPrefix: "d", CreatedBefore: at(20)}, Limit: 7, Cursor: "0"})
			},
			want: api.InstancesResponse{Instances: []api.InstanceSummary{doneSummary}},
			check: func(t *testing.T, h *fakehost.Host) {
				want := store.InstanceQuery{Filter: store.InstanceFilter{Statuses: []engine.Status{engine.StatusFailed, engine.StatusCompleted},
					ModuleHash: hash, IDPrefix: "d", CreatedBefore: at(20)}, After: "0", Limit: 7}
				if got := h.ListQuery(); !reflect.DeepEqual(got, want) {
					t.Errorf("query %+v, want %+v", got, want)
				}
			},
		},
		{
			name:    "list fails",
			setup:   func(h *fakehost.Host) { h.Fail("List", errors.New("host: list: disk on fire")) },
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.List(ctx, client.ListRequest{}) },
			want:    api.InstancesResponse{},
			wantErr: `durabox: list instances: list: disk on fire`, wantStatus: 500,
		},
		{
			name: "details",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Details(ctx, "done") },
			want: api.InstanceDetails{Instance: done, Executions: []api.Execution{{ID: 1, Events: 2, StartedAt: ptr(at(7)), EndedAt: ptr(at(8)), End: engine.OrchestrationCompleted}},
				Children: []api.InstanceSummary{}},
		},
		{
			name: "deploy with an environment",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.DeployWithEnv(ctx, []byte("\x00asm fake"), []string{"TOKEN=s3cret", "URL=x"})
			},
			want:  api.Module{Hash: hash, Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, EnvKeys: []string{"TOKEN", "URL"}, DeployedAt: at(9)},
			check: wantEnv("TOKEN=s3cret", "URL=x"),
		},
		{
			name: "deploy with no environment clears it",
			setup: func(h *fakehost.Host) {
				h.DeployWithEnv(context.Background(), []byte("\x00asm fake"), []string{"GONE=1"})
			},
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.DeployWithEnv(ctx, []byte("\x00asm fake"), nil)
			},
			want:  api.Module{Hash: hash, Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, DeployedAt: at(10)},
			check: wantEnv(),
		},
		{
			name: "deploy without an environment keeps it",
			setup: func(h *fakehost.Host) {
				h.DeployWithEnv(context.Background(), []byte("\x00asm fake"), []string{"KEPT=1"})
			},
			call:  func(ctx context.Context, c *client.Client) (any, error) { return c.Deploy(ctx, []byte("\x00asm fake")) },
			want:  api.Module{Hash: hash, Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, EnvKeys: []string{"KEPT"}, DeployedAt: at(10)},
			check: wantEnv("KEPT=1"),
		},
		{
			name:    "remove a module in use",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return nil, c.RemoveModule(ctx, hash) },
			want:    nil,
			wantErr: "durabox: remove module: module in use: instances run on it", wantStatus: 409,
		},
		{
			name: "terminate",
			setup: func(h *fakehost.Host) {
				h.Start(context.Background(), "Later", json.RawMessage(`null`), "later")
			},
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.Terminate(ctx, "later", "stuck")
			},
			want: nil,
			check: func(t *testing.T, h *fakehost.Host) {
				if got := h.Cancelled(); !reflect.DeepEqual(got, []string{"terminate later: stuck"}) {
					t.Errorf("requests %q", got)
				}
			},
		},
		{
			name:    "cancel a finished instance",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return nil, c.Cancel(ctx, "done", "") },
			want:    nil,
			wantErr: `durabox: cancel: instance finished: "done" is Completed; nothing more can happen to it`, wantStatus: 409,
		},
		{
			name: "queue",
			setup: func(h *fakehost.Host) {
				h.SetQueue(store.QueueStats{Ready: 2, ReadyInstances: 1, Activities: 3, OldestActivity: &store.WaitingItem{InstanceID: "a", What: "Charge", Since: at(1)}})
			},
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Queue(ctx) },
			want: api.QueueResponse{Ready: 2, ReadyInstances: 1, Activities: 3, OldestActivity: &api.WaitingItem{InstanceID: "a", What: "Charge", Since: at(1)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, c, polls := newHost(t)
			if tt.setup != nil {
				tt.setup(h)
			}
			got, err := tt.call(context.Background(), c)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
			checkErr(t, err, tt.wantErr, tt.wantStatus)
			if *polls != tt.polls {
				t.Errorf("Later ran %d times, want %d", *polls, tt.polls)
			}
			if tt.check != nil {
				tt.check(t, h)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// wantFilter checks the filter the fake was given last (times in UTC).
func wantFilter(f store.InstanceFilter) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		got := h.Filter()
		for _, t := range []*time.Time{&got.CreatedAfter, &got.CreatedBefore, &got.FinishedBefore} {
			*t = t.UTC()
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("filter %+v, want %+v", got, f)
		}
	}
}

// wantEnv checks the environment of the newest module.
func wantEnv(env ...string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		mods, _ := h.Modules(context.Background())
		if len(mods) == 0 || !reflect.DeepEqual(mods[0].Env, env) && len(env)+len(mods[0].Env) > 0 {
			t.Errorf("modules %+v; want the newest with environment %q", mods, env)
		}
	}
}

// checkErr checks err's text and, for a refusal, its status.
func checkErr(t *testing.T, err error, want string, wantStatus int) {
	t.Helper()
	if got := fmt.Sprint(err); err == nil && want != "" || err != nil && got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	var refusal *client.Error
	if errors.As(err, &refusal) != (wantStatus != 0) || wantStatus != 0 && refusal.StatusCode != wantStatus {
		t.Errorf("error %#v, want a *client.Error with status %d", err, wantStatus)
	}
}

func TestClientWhenTheHostIsNotThere(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = client.New("http://"+addr, nil).List(context.Background(), client.ListRequest{})
	checkErr(t, err, "durabox: list instances: no host is running at "+addr+"; start one with `durabox serve --db FILE`", 0)
}

func TestClientAgainstSomethingElse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		wantErr    string
		wantStatus int
	}{
		{"error without a JSON body", http.StatusBadGateway, "upstream down\n", "durabox: list instances: the host answered 502 Bad Gateway: upstream down", 502},
		{"error without a body", http.StatusServiceUnavailable, "", "durabox: list instances: the host answered 503 Service Unavailable", 503},
		{"success without JSON", http.StatusOK, "<html>", "durabox: list instances: read the host's answer: invalid character '<' looking for beginning of value", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			_, err := client.New(srv.URL, &client.Options{HTTPClient: srv.Client()}).List(context.Background(), client.ListRequest{})
			checkErr(t, err, tt.wantErr, tt.wantStatus)
		})
	}
}

func TestWaitStopsWithItsContext(t *testing.T) {
	t.Parallel()
	h, c, _ := newHost(t)
	if _, err := h.Start(context.Background(), "Later", nil, "later"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Wait(ctx, "later")
	if !errors.Is(err, context.Canceled) || err.Error() != "durabox: wait: context canceled" {
		t.Errorf("error %v, want durabox: wait: context canceled", err)
	}
}

// TestClientTokens: the client sends its token; a host that asks for one
// refuses a client without it, or with the read-only one for a change.
func TestClientTokens(t *testing.T) {
	t.Parallel()
	h, _, _ := newHost(t)
	srv := httptest.NewServer(h.Handler(server.Options{Token: adminToken, ReadToken: readToken}))
	defer srv.Close()
	ctx := context.Background()
	newClient := func(token string) *client.Client {
		return client.New(srv.URL, &client.Options{HTTPClient: srv.Client(), Token: token})
	}
	_, err := newClient("").List(ctx, client.ListRequest{})
	checkErr(t, err, `durabox: list instances: unauthorized: this host asks for a token; send it as "Authorization: Bearer TOKEN" (durabox reads it from $DURABOX_TOKEN or --token-file)`, 401)
	if _, err := newClient(readToken).List(ctx, client.ListRequest{}); err != nil {
		t.Errorf("list with the read-only token: %v", err)
	}
	_, err = newClient(readToken).Start(ctx, api.StartRequest{Name: "Greeting"})
	checkErr(t, err, "durabox: start: forbidden: this token may only read (GET); POST /v1/instances needs the admin token", 403)
	if _, err := newClient(adminToken).Start(ctx, api.StartRequest{Name: "Greeting"}); err != nil {
		t.Errorf("start with the admin token: %v", err)
	}
	for token, want := range map[string]api.AccessResponse{
		adminToken: {Access: "admin", TokenRequired: true, Token: server.DefaultName("admin", adminToken)},
		readToken:  {Access: "read", TokenRequired: true, Token: server.DefaultName("read", readToken)},
	} {
		if got, err := newClient(token).Access(ctx); err != nil || got != want {
			t.Errorf("access: %+v, %v; want %+v", got, err, want)
		}
	}
	_, err = newClient("").Access(ctx)
	checkErr(t, err, `durabox: access: unauthorized: this host asks for a token; send it as "Authorization: Bearer TOKEN" (durabox reads it from $DURABOX_TOKEN or --token-file)`, 401)
	// The readiness check needs no token.
	if err := newClient("").Ready(ctx); err != nil {
		t.Errorf("ready without a token: %v", err)
	}
	h.Fail("Ready", fmt.Errorf("%w: the host has stopped", api.ErrNotReady))
	checkErr(t, newClient("").Ready(ctx), "durabox: ready: not ready: the host has stopped", 503)
}

// TestClientTLS: the client reaches an https host whose certificate comes
// from an authority it is given, and says what to do when it is not.
func TestClientTLS(t *testing.T) {
	t.Parallel()
	h, _, _ := newHost(t)
	srv := httptest.NewUnstartedServer(h.Handler(server.Options{}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake refused below
	srv.StartTLS()
	defer srv.Close()
	ctx := context.Background()
	_, err := client.New(srv.URL, nil).List(ctx, client.ListRequest{})
	if err == nil || !strings.Contains(err.Error(), "is not signed by an authority this client trusts (a self-signed certificate? pass its CA with --tls-ca FILE)") {
		t.Errorf("without the authority: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	if page, err := client.New(srv.URL, &client.Options{RootCAs: roots}).List(ctx, client.ListRequest{}); err != nil || len(page.Instances) != 1 {
		t.Errorf("with the authority: %+v, %v", page, err)
	}
}

// TestClientWithRootCAsRefusesPlainHTTP: a client given the authorities
// of an https host, but an http:// address, sends nothing (neither its
// token nor a body) and says why.
func TestClientWithRootCAsRefusesPlainHTTP(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	c := client.New(srv.URL, &client.Options{Token: adminToken, RootCAs: x509.NewCertPool()})
	_, err := c.Start(context.Background(), api.StartRequest{Name: "Greeting"})
	want := "durabox: start: the client has certificate authorities for https (Options.RootCAs, --tls-ca), but the host's address, " + srv.URL +
		", is plain http, where the token and the data would travel in clear; give its https:// address"
	if err == nil || err.Error() != want {
		t.Errorf("start: %v\nwant %s", err, want)
	}
	if !errors.Is(err, client.ErrPlainHTTP) {
		t.Errorf("start: %v; want client.ErrPlainHTTP", err)
	}
	if len(got) > 0 {
		t.Errorf("the host got %q; want nothing", got)
	}
}

// flaky is a transport to a handler that fails as a host that is down
// would, fails more times, then serves.
type flaky struct {
	h     http.Handler
	fails int
	// status, when set, is what the failures answer, instead of no
	// connection.
	status int
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	switch {
	case f.fails > 0 && f.status == 0:
		f.fails--
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	case f.fails > 0:
		f.fails--
		rec.WriteHeader(f.status)
	default:
		f.h.ServeHTTP(rec, r)
	}
	return rec.Result(), nil
}

// TestWaitAcrossARestart: Wait asks again while the host is away (no
// connection, or a proxy that says it is unavailable), waiting 100ms, then
// twice as long each time; a refusal ends it at once; so does its
// context, with the last failure. In fake time.
func TestWaitAcrossARestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fails       int
		status      int
		timeout     time.Duration
		wantElapsed time.Duration
		wantErr     string
	}{
		{name: "the host comes back", fails: 4, wantElapsed: 1500 * time.Millisecond},
		{name: "a proxy says it is unavailable", fails: 2, status: http.StatusServiceUnavailable, wantElapsed: 300 * time.Millisecond},
		{name: "a refusal", fails: 1, status: http.StatusUnauthorized, wantErr: "durabox: wait: the host answered 401 Unauthorized"},
		{name: "the host stays away", fails: 100, timeout: time.Second, wantElapsed: time.Second,
			wantErr: "durabox: wait: context deadline exceeded (the last attempt: durabox: wait: no host is running at durabox; start one with `durabox serve --db FILE`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, _ := newFake(t)
				c := client.New("http://durabox", &client.Options{HTTPClient: &http.Client{Transport: &flaky{h: h.Handler(server.Options{Hosts: []string{"durabox"}}), fails: tt.fails, status: tt.status}}})
				ctx := context.Background()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				began := time.Now()
				inst, err := c.Wait(ctx, "done")
				if elapsed := time.Since(began); elapsed != tt.wantElapsed {
					t.Errorf("waited %s, want %s", elapsed, tt.wantElapsed)
				}
				if tt.wantErr == "" && (err != nil || inst.Status != engine.StatusCompleted) {
					t.Errorf("Wait = %+v, %v; want the instance Completed", inst, err)
				}
				if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
					t.Errorf("Wait: %v\nwant %s", err, tt.wantErr)
				}
			})
		})
	}
}

// TestClientQuery: a query's argument travels in the URL of a GET, which
// the read-only token may send, and a long one in a POST's body, which
// needs the admin token; the host's refusals come back as they are.
func TestClientQuery(t *testing.T) {
	t.Parallel()
	h, _, _ := newHost(t)
	h.HandleQuery("Echo", func(id string, data json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"id": %q, "data": %s}`, id, data)), nil
	})
	h.HandleQuery("Refuse", func(string, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("not now") })
	srv := httptest.NewServer(h.Handler(server.Options{Token: adminToken, ReadToken: readToken}))
	defer srv.Close()
	ctx := context.Background()
	reader := client.New(srv.URL, &client.Options{HTTPClient: srv.Client(), Token: readToken})
	admin := client.New(srv.URL, &client.Options{HTTPClient: srv.Client(), Token: adminToken})
	got, err := reader.Query(ctx, "done", "Echo", json.RawMessage(`{"a + b": "c/d?"}`))
	if err != nil || string(got) != `{"id":"done","data":{"a + b":"c/d?"}}` {
		t.Fatalf("query in a URL: %s, %v", got, err)
	}
	long := json.RawMessage(`"` + strings.Repeat("x", 5000) + `"`)
	_, err = reader.Query(ctx, "done", "Echo", long)
	checkErr(t, err, "durabox: query: forbidden: this token may only read (GET); POST /v1/instances/{id}/queries/{name} needs the admin token", 403)
	if got, err := admin.Query(ctx, "done", "Echo", long); err != nil || !strings.Contains(string(got), string(long)) {
		t.Fatalf("query in a body: %.80s, %v", got, err)
	}
	_, err = admin.Query(ctx, "done", "Refuse", nil)
	checkErr(t, err, `durabox: query: query failed: query "Refuse" of "done": not now`, 422)
	_, err = admin.Query(ctx, "done", "Nope", nil)
	checkErr(t, err, `durabox: query: no such query: "done" handles no query "Nope"; it handles ["Echo" "Refuse"]`, 404)
	_, err = admin.Query(ctx, "nobody", "Echo", nil)
	checkErr(t, err, `durabox: query: instance not found: "nobody"`, 404)
}
