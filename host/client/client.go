package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/durabox/durabox/engine"
)

// longPoll is how long each request Wait makes asks the host to wait for
// the instance to finish.
const longPoll = 30 * time.Second

// Client is a client of one Durabox host. It is safe for concurrent use.
type Client struct {
	base string
	http *http.Client
}

// New returns a client of the host at baseURL, such as
// "http://127.0.0.1:7070". A nil httpClient means http.DefaultClient. Wait
// holds each request open for up to 30s: give httpClient no shorter
// timeout.
func New(baseURL string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: httpClient}
}

// Deploy sends a module (the bytes of a .wasm file) to the host, which
// validates and stores it, with the environment variables ("KEY=value") its
// activities will see.
func (c *Client) Deploy(ctx context.Context, wasm []byte, env []string) (Module, error) {
	var m Module
	path := "/v1/modules"
	if len(env) > 0 {
		path += "?" + url.Values{"env": env}.Encode()
	}
	err := c.do(ctx, "deploy", http.MethodPost, path, "application/wasm", bytes.NewReader(wasm), &m)
	return m, err
}

// Raise raises an external event for an instance.
func (c *Client) Raise(ctx context.Context, id string, req RaiseRequest) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("durabox: raise: %w", err)
	}
	return c.do(ctx, "raise", http.MethodPost, instancePath(id)+"/events", "application/json", bytes.NewReader(body), nil)
}

// Cancel requests the cancellation of an instance.
func (c *Client) Cancel(ctx context.Context, id, reason string) error {
	body, err := json.Marshal(CancelRequest{Reason: reason})
	if err != nil {
		return fmt.Errorf("durabox: cancel: %w", err)
	}
	return c.do(ctx, "cancel", http.MethodPost, instancePath(id)+"/cancel", "application/json", bytes.NewReader(body), nil)
}

// Purge deletes a finished instance and its history. The host refuses
// (409) an instance that has not finished.
func (c *Client) Purge(ctx context.Context, id string) error {
	return c.do(ctx, "purge", http.MethodDelete, instancePath(id), "", nil, nil)
}

// Modules returns the deployed modules, newest first.
func (c *Client) Modules(ctx context.Context) ([]Module, error) {
	var r ModulesResponse
	err := c.do(ctx, "list modules", http.MethodGet, "/v1/modules", "", nil, &r)
	return r.Modules, err
}

// Start starts an orchestration instance and returns its id.
func (c *Client) Start(ctx context.Context, req StartRequest) (string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("durabox: start: encode the request: %w", err)
	}
	var r StartResponse
	err = c.do(ctx, "start", http.MethodPost, "/v1/instances", "application/json", bytes.NewReader(body), &r)
	return r.ID, err
}

// Instance returns an instance as it stands.
func (c *Client) Instance(ctx context.Context, id string) (Instance, error) {
	var inst Instance
	err := c.do(ctx, "get instance", http.MethodGet, instancePath(id), "", nil, &inst)
	return inst, err
}

// Wait returns the instance once it has completed or failed, asking the
// host again every 30s for as long as it runs. If ctx is done first,
// Wait returns the instance as it last stood with ctx's error.
func (c *Client) Wait(ctx context.Context, id string) (Instance, error) {
	var last Instance
	for {
		var inst Instance
		if err := c.do(ctx, "wait", http.MethodGet, instancePath(id)+"?wait="+longPoll.String(), "", nil, &inst); err != nil {
			return last, err
		}
		if inst.Status.IsTerminal() {
			return inst, nil
		}
		last = inst
	}
}

// History returns the history of an instance's current execution, oldest
// event first.
func (c *Client) History(ctx context.Context, id string) ([]engine.Event, error) {
	return c.ExecutionHistory(ctx, id, 0)
}

// ExecutionHistory returns the history of one execution of an instance,
// from 1 (0: the current one).
func (c *Client) ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var r HistoryResponse
	path := instancePath(id) + "/history"
	if execution > 0 {
		path += fmt.Sprintf("?execution=%d", execution)
	}
	err := c.do(ctx, "history", http.MethodGet, path, "", nil, &r)
	return r.Events, err
}

// List returns the instances, newest first.
func (c *Client) List(ctx context.Context) ([]Instance, error) {
	var r InstancesResponse
	err := c.do(ctx, "list instances", http.MethodGet, "/v1/instances", "", nil, &r)
	return r.Instances, err
}

func instancePath(id string) string { return "/v1/instances/" + url.PathEscape(id) }

// do sends one request and reads a successful answer into out: a
// *bytes.Buffer takes its bytes, a func(io.Reader) error reads it, anything
// else (not nil) decodes its JSON. op names the operation in errors.
func (c *Client) do(ctx context.Context, op, method, path, contentType string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("durabox: %s: %w", op, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return fmt.Errorf("durabox: %s: %w", op, ctx.Err())
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("durabox: %s: no host is running at %s; start one with `durabox serve --db FILE`", op, req.URL.Host)
	default:
		return fmt.Errorf("durabox: %s: %w", op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return refusal(op, resp)
	}
	switch out := out.(type) {
	case nil:
	case *bytes.Buffer:
		if _, err := out.ReadFrom(resp.Body); err != nil {
			return fmt.Errorf("durabox: %s: read the host's answer: %w", op, err)
		}
	case func(io.Reader) error:
		if err := out(resp.Body); err != nil {
			return fmt.Errorf("durabox: %s: %w", op, err)
		}
	default:
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("durabox: %s: read the host's answer: %w", op, err)
		}
	}
	return nil
}
