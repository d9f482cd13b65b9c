package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/client/fakehost"
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
	if _, err := h.Deploy(ctx, []byte("\x00asm fake"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, "Greeting", json.RawMessage(`"world"`), "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(host.NewHandler(h, nil))
	t.Cleanup(srv.Close)
	return h, client.New(srv.URL+"/", srv.Client()), &polls
}

var (
	module = client.Module{Hash: hash, Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, DeployedAt: at(6)}
	done   = client.Instance{
		ID: "done", Name: "Greeting", ModuleHash: hash, ExecutionID: 1, Status: engine.StatusCompleted,
		Input: json.RawMessage(`"world"`), Result: json.RawMessage(`"Hello, world!"`), CreatedAt: at(7), UpdatedAt: at(8),
	}
)

func TestClient(t *testing.T) {
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
	}{
		{
			name: "deploy",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Deploy(ctx, []byte("x"), nil) },
			want: client.Module{Hash: "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", Orchestrations: []string{"Greeting", "Later"}, Activities: []string{}, DeployedAt: at(9)},
		},
		{
			name:    "deploy refused",
			setup:   func(h *fakehost.Host) { h.Fail("Deploy", fmt.Errorf("%w: not wasm", host.ErrBadModule)) },
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.Deploy(ctx, []byte("x"), nil) },
			want:    client.Module{},
			wantErr: "durabox: deploy: module refused: not wasm", wantStatus: 422,
		},
		{
			name: "modules",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Modules(ctx) },
			want: []client.Module{module},
		},
		{
			name: "start",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, client.StartRequest{Name: "Greeting", Input: json.RawMessage(`"you"`)})
			},
			want: "inst2",
		},
		{
			name: "start with an id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, client.StartRequest{Name: "Greeting", ID: "mine"})
			},
			want: "mine",
		},
		{
			name: "start an unknown orchestration",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, client.StartRequest{Name: "Nope"})
			},
			want:    "",
			wantErr: `durabox: start: unknown orchestration "Nope": no deployed module registers it`, wantStatus: 422,
		},
		{
			name: "start with an id taken",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, client.StartRequest{Name: "Greeting", ID: "done"})
			},
			want:    "",
			wantErr: `durabox: start: instance already exists: "done"`, wantStatus: 409,
		},
		{
			name: "start with input that is not JSON",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Start(ctx, client.StartRequest{Name: "Greeting", Input: json.RawMessage(`world`)})
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
			want:    client.Instance{},
			wantErr: `durabox: get instance: instance not found: "a/b"`, wantStatus: 404,
		},
		{
			name:    "instance without an id",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.Instance(ctx, "") },
			want:    client.Instance{},
			wantErr: `durabox: get instance: the host answered 404 Not Found: 404 page not found`, wantStatus: 404,
		},
		{
			name: "wait",
			setup: func(h *fakehost.Host) {
				h.Start(context.Background(), "Later", json.RawMessage(`null`), "later")
			},
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.Wait(ctx, "later") },
			want: client.Instance{
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
			want:    client.Instance{},
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
				return c.List(ctx)
			},
			want: []client.Instance{},
		},
		{
			name: "purge what has not finished",
			setup: func(h *fakehost.Host) {
				h.Start(context.Background(), "Later", json.RawMessage(`null`), "later")
			},
			call:    func(ctx context.Context, c *client.Client) (any, error) { return nil, c.Purge(ctx, "later") },
			want:    nil,
			wantErr: `durabox: purge: instance not finished: "later" has not ended; cancel it or wait for it to end, then purge it`, wantStatus: 409,
		},
		{
			name:    "purge not found",
			call:    func(ctx context.Context, c *client.Client) (any, error) { return nil, c.Purge(ctx, "nope") },
			want:    nil,
			wantErr: `durabox: purge: instance not found: "nope"`, wantStatus: 404,
		},
		{
			name: "list",
			call: func(ctx context.Context, c *client.Client) (any, error) { return c.List(ctx) },
			want: []client.Instance{done},
		},
		{
			name:    "list fails",
			setup:   func(h *fakehost.Host) { h.Fail("List", errors.New("host: list: disk on fire")) },
			call:    func(ctx context.Context, c *client.Client) (any, error) { return c.List(ctx) },
			want:    []client.Instance(nil),
			wantErr: `durabox: list instances: list: disk on fire`, wantStatus: 500,
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
		})
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = client.New("http://"+addr, nil).List(context.Background())
	checkErr(t, err, "durabox: list instances: no host is running at "+addr+"; start one with `durabox serve --db FILE`", 0)
}

func TestClientAgainstSomethingElse(t *testing.T) {
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
			_, err := client.New(srv.URL, srv.Client()).List(context.Background())
			checkErr(t, err, tt.wantErr, tt.wantStatus)
		})
	}
}

func TestWaitStopsWithItsContext(t *testing.T) {
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
