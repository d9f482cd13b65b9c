package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

// longPoll is how long each request Wait makes asks the host to wait for
// the instance to finish.
const longPoll = 30 * time.Second

// Client is a client of one Durabox host. It is safe for concurrent use.
type Client struct {
	base  string
	http  *http.Client
	token string
	// inClear is set when the client was given certificate authorities
	// for an http:// address: it sends nothing.
	inClear bool
	// backoff is how long Wait waits before it asks again after the
	// connection failed the nth time in a row.
	backoff func(n int) time.Duration
}

// Options configures New. A nil *Options, like the zero value, means
// every default.
type Options struct {
	// HTTPClient makes the requests. Nil means a client of its own (with
	// RootCAs). Wait holds each request open for up to 30s: give it no
	// shorter timeout.
	HTTPClient *http.Client
	// Token is sent with every request as "Authorization: Bearer Token":
	// the admin token, or the read-only one for reading. Empty sends none,
	// which a host on loopback without a token accepts.
	Token string
	// RootCAs are the certificate authorities an https:// host's
	// certificate must come from (for a self-signed certificate: itself).
	// Nil means the system's. It applies when HTTPClient is nil. Given
	// with an http:// address, every request fails with ErrPlainHTTP.
	RootCAs *x509.CertPool
}

// New returns a client of the host at baseURL, such as
// "http://127.0.0.1:7070" or "https://durabox.example.com:7070".
func New(baseURL string, opts *Options) *Client {
	if opts == nil {
		opts = &Options{}
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12}
		httpClient = &http.Client{Transport: transport}
	}
	inClear := opts.RootCAs != nil && strings.HasPrefix(strings.ToLower(baseURL), "http://")
	return &Client{base: strings.TrimRight(baseURL, "/"), http: httpClient, token: opts.Token, inClear: inClear, backoff: backoff}
}

// backoff waits 100ms after the first failure in a row, twice as long
// after each next one, and 5s at most.
func backoff(n int) time.Duration {
	return min(100*time.Millisecond<<min(n, 10), 5*time.Second)
}

// Deploy sends a module (the bytes of a .wasm file) to the host, which
// validates and stores it. A module deployed before keeps the environment
// its activities see; a new one has none.
func (c *Client) Deploy(ctx context.Context, wasm []byte) (api.Module, error) {
	var m api.Module
	err := c.do(ctx, "deploy", http.MethodPost, "/v1/modules", "application/wasm", bytes.NewReader(wasm), &m)
	return m, err
}

// DeployWithEnv is Deploy with the environment variables ("KEY=value") its
// activities will see, which replace those it had: none clears them. They
// travel in the body, never in the URL.
func (c *Client) DeployWithEnv(ctx context.Context, wasm []byte, env []string) (api.Module, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("module", "module.wasm")
	if err == nil {
		_, err = part.Write(wasm)
	}
	for _, kv := range env {
		if err == nil {
			err = mw.WriteField("env", kv)
		}
	}
	if err == nil && len(env) == 0 {
		err = mw.WriteField("envClear", "true")
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return api.Module{}, fmt.Errorf("durabox: deploy: %w", err)
	}
	var m api.Module
	err = c.do(ctx, "deploy", http.MethodPost, "/v1/modules", mw.FormDataContentType(), &body, &m)
	return m, err
}

// RemoveModule removes a module no instance runs on (purge those first),
// named by its hash or a prefix of it that no other deployed module's
// hash has.
func (c *Client) RemoveModule(ctx context.Context, hash string) error {
	return c.do(ctx, "remove module", http.MethodDelete, "/v1/modules/"+url.PathEscape(hash), "", nil, nil)
}

// Raise raises an external event for an instance.
func (c *Client) Raise(ctx context.Context, id string, req api.RaiseRequest) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("durabox: raise: %w", err)
	}
	return c.do(ctx, "raise", http.MethodPost, instancePath(id)+"/events", "application/json", bytes.NewReader(body), nil)
}

// Query runs the query name of an instance with the argument data (JSON;
// empty means null) and returns its handler's answer. Nothing is written.
// An argument of up to maxQueryURLData bytes travels in the URL of a GET,
// which the read-only token may send; a longer one in the body of a POST,
// which needs the admin token.
func (c *Client) Query(ctx context.Context, id, name string, data json.RawMessage) (json.RawMessage, error) {
	var r api.QueryResponse
	path := instancePath(id) + "/queries/" + url.PathEscape(name)
	if len(data) <= maxQueryURLData {
		if len(data) > 0 {
			path += "?data=" + url.QueryEscape(string(data))
		}
		err := c.do(ctx, "query", http.MethodGet, path, "", nil, &r)
		return r.Result, err
	}
	body, err := json.Marshal(api.QueryRequest{Data: data})
	if err != nil {
		return nil, fmt.Errorf("durabox: query: %w", err)
	}
	err = c.do(ctx, "query", http.MethodPost, path, "application/json", bytes.NewReader(body), &r)
	return r.Result, err
}

// maxQueryURLData is the longest argument Query sends in a URL.
const maxQueryURLData = 4 << 10

// Cancel requests the cancellation of an instance.
func (c *Client) Cancel(ctx context.Context, id, reason string) error {
	return c.request(ctx, "cancel", id, reason)
}

// Terminate ends an instance at its next turn, without its cooperation.
func (c *Client) Terminate(ctx context.Context, id, reason string) error {
	return c.request(ctx, "terminate", id, reason)
}

// request asks the host to cancel or terminate (op) an instance.
func (c *Client) request(ctx context.Context, op, id, reason string) error {
	body, err := json.Marshal(api.CancelRequest{Reason: reason})
	if err != nil {
		return fmt.Errorf("durabox: %s: %w", op, err)
	}
	return c.do(ctx, op, http.MethodPost, instancePath(id)+"/"+op, "application/json", bytes.NewReader(body), nil)
}

// Purge deletes a finished instance and its history. The host refuses
// (409) an instance that has not finished.
func (c *Client) Purge(ctx context.Context, id string) error {
	return c.do(ctx, "purge", http.MethodDelete, instancePath(id), "", nil, nil)
}

// PurgeMatching deletes every finished instance f selects (f must set
// something) and returns how many; with dryRun it deletes nothing and
// returns how many it would.
func (c *Client) PurgeMatching(ctx context.Context, f Filter, dryRun bool) (int, error) {
	q := f.values()
	if dryRun {
		q.Set("dryRun", "true")
	}
	var r api.PurgedResponse
	err := c.do(ctx, "purge", http.MethodDelete, "/v1/instances?"+q.Encode(), "", nil, &r)
	return r.Purged, err
}

// Modules returns the deployed modules, newest first, with their
// instances per status.
func (c *Client) Modules(ctx context.Context) ([]api.Module, error) {
	var r api.ModulesResponse
	err := c.do(ctx, "list modules", http.MethodGet, "/v1/modules", "", nil, &r)
	return r.Modules, err
}

// Start starts an orchestration instance and returns its id.
func (c *Client) Start(ctx context.Context, req api.StartRequest) (string, error) {
	r, err := c.StartWith(ctx, req)
	return r.ID, err
}

// StartWith starts an orchestration instance and returns the host's
// answer: with req.Raise, whether it started the instance or only raised
// the event at the one there.
func (c *Client) StartWith(ctx context.Context, req api.StartRequest) (api.StartResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return api.StartResponse{}, fmt.Errorf("durabox: start: encode the request: %w", err)
	}
	var r api.StartResponse
	err = c.do(ctx, "start", http.MethodPost, "/v1/instances", "application/json", bytes.NewReader(body), &r)
	return r, err
}

// Instance returns an instance as it stands.
func (c *Client) Instance(ctx context.Context, id string) (api.Instance, error) {
	d, err := c.Details(ctx, id)
	return d.Instance, err
}

// Details returns an instance as it stands, with its executions and its
// children.
func (c *Client) Details(ctx context.Context, id string) (api.InstanceDetails, error) {
	var d api.InstanceDetails
	err := c.do(ctx, "get instance", http.MethodGet, instancePath(id), "", nil, &d)
	return d, err
}

// Wait returns the instance once it has finished, asking the host again
// every 30s for as long as it runs. When the connection fails (the host
// restarts, say) it asks again, waiting longer each time up to 5s, until
// ctx is done; a refusal (an *Error) ends it. If ctx is done first, Wait
// returns the instance as it last stood with ctx's error.
func (c *Client) Wait(ctx context.Context, id string) (api.Instance, error) {
	var last api.Instance
	for failures := 0; ; {
		var d api.Instance
		err := c.do(ctx, "wait", http.MethodGet, instancePath(id)+"?brief=true&wait="+longPoll.String(), "", nil, &d)
		var refused *Error
		switch {
		case err == nil:
			if d.Status.IsTerminal() {
				return d, nil
			}
			last, failures = d, 0
			continue
		case ctx.Err() != nil, errors.As(err, &refused) && !unavailable(refused.StatusCode):
			return last, err
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("durabox: wait: %w (the last attempt: %v)", ctx.Err(), err)
		case <-time.After(c.backoff(failures)):
		}
		failures++
	}
}

// unavailable reports whether a status says the host is not there now
// but may be soon (a proxy in front of a host that restarts).
func unavailable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// History returns the history of an instance's current execution, oldest
// event first.
func (c *Client) History(ctx context.Context, id string) ([]engine.Event, error) {
	return c.ExecutionHistory(ctx, id, 0)
}

// ExecutionHistory returns the history of one execution of an instance,
// from 1 (0: the current one).
func (c *Client) ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var r api.HistoryResponse
	path := instancePath(id) + "/history"
	if execution > 0 {
		path += fmt.Sprintf("?execution=%d", execution)
	}
	err := c.do(ctx, "history", http.MethodGet, path, "", nil, &r)
	return r.Events, err
}

// Filter selects instances, for List and PurgeMatching: those that match
// every field set. The zero value selects every instance.
type Filter struct {
	Statuses []engine.Status
	// Name is the orchestration; Module the full hash of the module.
	Name, Module string
	// IDPrefix selects the ids that begin with it; Parent the children of
	// that instance.
	IDPrefix, Parent string
	// CreatedAfter (at or after) and CreatedBefore bound the creation
	// time; FinishedBefore selects the finished instances that finished
	// before it.
	CreatedAfter, CreatedBefore, FinishedBefore time.Time
	// Where selects the instances a filter in the language of
	// docs/filters.md holds for: customer = "c-42" AND amount > 100.
	Where string
}

// values writes f as the query of GET and DELETE /v1/instances.
func (f Filter) values() url.Values {
	q := url.Values{}
	for _, s := range f.Statuses {
		q.Add("status", string(s))
	}
	for _, p := range []struct{ name, v string }{{"name", f.Name}, {"module", f.Module}, {"idPrefix", f.IDPrefix}, {"parent", f.Parent}, {"where", f.Where}} {
		if p.v != "" {
			q.Set(p.name, p.v)
		}
	}
	for _, t := range []struct {
		name string
		v    time.Time
	}{{"createdAfter", f.CreatedAfter}, {"createdBefore", f.CreatedBefore}, {"finishedBefore", f.FinishedBefore}} {
		if !t.v.IsZero() {
			q.Set(t.name, t.v.UTC().Format(time.RFC3339Nano))
		}
	}
	return q
}

// addWaits adds to q the filters on what instances wait on: stalledFor
// (when above 0) and waitingOn.
func addWaits(q url.Values, stalledFor time.Duration, waitingOn []engine.WaitKind) {
	if stalledFor > 0 {
		q.Set("stalledFor", stalledFor.String())
	}
	for _, k := range waitingOn {
		q.Add("waitingOn", string(k))
	}
}

// ListRequest asks List for a page of instances.
type ListRequest struct {
	Filter
	// Limit is the most instances in the page; zero means the host's
	// default, 100.
	Limit int
	// Cursor continues a listing: the Next of the page before.
	Cursor string
	// StalledFor, when above 0, selects the instances not finished that
	// no turn changed for that long; WaitingOn those that wait on any of
	// these kinds.
	StalledFor time.Duration
	WaitingOn  []engine.WaitKind
}

// List returns a page of the instances req selects, newest first, as
// summaries (Details has an instance's input and result).
func (c *Client) List(ctx context.Context, req ListRequest) (api.InstancesResponse, error) {
	q := req.values()
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if req.Cursor != "" {
		q.Set("cursor", req.Cursor)
	}
	addWaits(q, req.StalledFor, req.WaitingOn)
	path := "/v1/instances"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var r api.InstancesResponse
	err := c.do(ctx, "list instances", http.MethodGet, path, "", nil, &r)
	return r, err
}

// Queue returns the work waiting on the host now.
func (c *Client) Queue(ctx context.Context) (api.QueueResponse, error) {
	var r api.QueueResponse
	err := c.do(ctx, "queue", http.MethodGet, "/v1/queue", "", nil, &r)
	return r, err
}

// Access returns what the client's token may do on the host: "admin" or
// "read", and whether the host asks for a token at all.
func (c *Client) Access(ctx context.Context) (api.AccessResponse, error) {
	var r api.AccessResponse
	err := c.do(ctx, "access", http.MethodGet, "/v1/access", "", nil, &r)
	return r, err
}

// Version returns what the host was built from (GET /v1/version).
func (c *Client) Version(ctx context.Context) (api.Version, error) {
	var v api.Version
	err := c.do(ctx, "version", http.MethodGet, "/v1/version", "", nil, &v)
	return v, err
}

// Ready returns nil when the host serves its work (GET /readyz), else
// an *Error with status 503 that says why not.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, "ready", http.MethodGet, "/readyz", "", nil, nil)
}

func instancePath(id string) string { return "/v1/instances/" + url.PathEscape(id) }

// do sends one request and reads a successful answer into out: a
// *bytes.Buffer takes its bytes, a func(io.Reader) error reads it, anything
// else (not nil) decodes its JSON. op names the operation in errors.
func (c *Client) do(ctx context.Context, op, method, path, contentType string, body io.Reader, out any) error {
	if c.inClear {
		return fmt.Errorf("durabox: %s: %w, but the host's address, %s, is plain http, where the token and the data would travel in clear; give its https:// address", op, ErrPlainHTTP, c.base)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("durabox: %s: %w", op, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	var unknownAuthority x509.UnknownAuthorityError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return fmt.Errorf("durabox: %s: %w", op, ctx.Err())
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("durabox: %s: no host is running at %s; start one with `durabox serve --db FILE`", op, req.URL.Host)
	case errors.As(err, &unknownAuthority):
		return fmt.Errorf("durabox: %s: the certificate of %s is not signed by an authority this client trusts (a self-signed certificate? pass its CA with --tls-ca FILE): %w", op, req.URL.Host, err)
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
	// A call ends with the host's answer, not with the part of it the
	// caller read: the host is done with the request (its audit record
	// written, for a change) only once the answer has ended, and a
	// streamed answer (an upgrade's) goes on past its last line.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("durabox: %s: read the host's answer: %w", op, err)
	}
	return nil
}
