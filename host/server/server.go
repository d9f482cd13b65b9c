package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/option"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// API is what a server serves: the operations of a host.Host, which
// implements it; package host/client/fakehost implements it in memory.
type API interface {
	Deploy(ctx context.Context, wasm []byte) (store.ModuleInfo, error)
	DeployWithEnv(ctx context.Context, wasm []byte, env []string) (store.ModuleInfo, error)
	RemoveModule(ctx context.Context, hash string) error
	Modules(ctx context.Context) ([]store.ModuleInfo, error)
	StartOn(ctx context.Context, module, name string, input json.RawMessage, id string) (string, error)
	StartWithEvent(ctx context.Context, module, name string, input json.RawMessage, id string, ev api.RaiseRequest) (bool, error)
	Instance(ctx context.Context, id string) (store.Instance, error)
	Executions(ctx context.Context, id string) ([]store.Execution, error)
	// Waits returns what an instance waits on beside its activity calls
	// (GET /v1/instances/{id}'s waitingOn).
	Waits(ctx context.Context, id string) ([]engine.Wait, error)
	// Now returns the host's time, from which GET
	// /v1/instances?stalledFor= counts back.
	Now() time.Time
	Attributes(ctx context.Context, id string) ([]abi.Attribute, error)
	Wait(ctx context.Context, id string) (store.Instance, error)
	ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error)
	List(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error)
	Count(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error)
	Queue(ctx context.Context) (store.QueueStats, error)
	Raise(ctx context.Context, id, name string, data json.RawMessage, persistent bool) error
	Query(ctx context.Context, id, name string, data json.RawMessage) (json.RawMessage, error)
	Update(ctx context.Context, id string, req api.UpdateRequest, wait time.Duration) (store.Update, error)
	StartWithUpdate(ctx context.Context, module, name string, input json.RawMessage, id string, req api.UpdateRequest, wait time.Duration) (store.Update, bool, error)
	AwaitUpdate(ctx context.Context, id, updateID string, wait time.Duration) (store.Update, error)
	Handlers(ctx context.Context, id string) (api.Handlers, error)
	Cancel(ctx context.Context, id, reason string) error
	Terminate(ctx context.Context, id, reason string) error
	Purge(ctx context.Context, id string) error
	PurgeMatching(ctx context.Context, f store.InstanceFilter, dryRun bool) (int, error)
	Replay(ctx context.Context, id string, req api.ReplayRequest) (api.ReplayReport, error)
	Upgrade(ctx context.Context, req api.UpgradeRequest, progress func(api.UpgradeLine)) (api.UpgradeReport, error)
	Export(ctx context.Context, id string) (*bundle.Bundle, error)
	Reset(ctx context.Context, id string, req api.ResetRequest) (api.ResetPlan, error)
	CreateSchedule(ctx context.Context, req api.ScheduleRequest) (api.Schedule, error)
	Schedules(ctx context.Context) ([]api.Schedule, error)
	Schedule(ctx context.Context, name string) (api.Schedule, error)
	PauseSchedule(ctx context.Context, name, note string) error
	ResumeSchedule(ctx context.Context, name string) error
	TriggerSchedule(ctx context.Context, name string) (api.ScheduleRun, error)
	DeleteSchedule(ctx context.Context, name string) error
	DryRunBatch(ctx context.Context, f store.InstanceFilter, req api.BatchRequest) (api.BatchDryRun, error)
	StartBatch(ctx context.Context, f store.InstanceFilter, filter string, req api.BatchRequest) (api.Batch, error)
	Batches(ctx context.Context) ([]api.Batch, error)
	Batch(ctx context.Context, id int64) (api.Batch, error)
	StopBatch(ctx context.Context, id int64) (api.Batch, error)
	// HistoryWarning returns the length of history past which GET
	// /v1/instances/{id} warns.
	HistoryWarning() int
	// Refused returns why the host cannot run the module with hash, or
	// nil: GET /v1/modules says so, and GET /v1/instances/{id} warns.
	Refused(hash string) error
	// Ready returns nil when the host serves its work, else why not
	// (GET /readyz).
	Ready(ctx context.Context) error
}

// Options configures New. The zero value serves everyone
// on the machine (clients that are not browsers, and the host's own
// dashboard), which is what a host on loopback does. Whatever the options,
// the handler refuses what a web page of another origin could make a
// browser send: a request for another host (421), a request that changes
// something from a page of another origin (403), and a POST whose body is
// not JSON (or, for a deploy, a module) (415).
type Options struct {
	// Logger receives a line for every request (method, path, status,
	// duration): at warn level for one answered with 5xx or slower than 5s
	// (a long poll's wait not counted), at debug level for the others; and
	// the errors answered with 500, and the requests refused for their
	// token. Nil discards.
	Logger *slog.Logger
	// Token, when set, is the admin token: every API request must then
	// carry it, or ReadToken, as "Authorization: Bearer TOKEN". Empty
	// means no token is asked for.
	Token string
	// ReadToken, when set, is a token that may read (GET) and nothing
	// more: not deploy, start, raise, cancel, terminate, purge or remove.
	// It needs Token, and must differ from it. Empty means none.
	ReadToken string
	// WorkerToken, when set, is a token for workers outside the host:
	// it may poll for tasks, heartbeat, complete and fail them (the
	// routes under /v1/tasks) and nothing more. It needs Token, and must
	// differ from it and from ReadToken. Empty means none.
	WorkerToken string
	// Tokens are more tokens the server accepts, each with a name and a
	// role (serve's --token and --token-file give them), beside Token,
	// ReadToken and WorkerToken, which are named by DefaultName. Names and
	// secrets must differ, and with any token at all one must be an
	// admin's. The token's name goes with each request into the host
	// (the history of an instance it changes names it) and into the audit
	// log. Empty means none.
	Tokens []Token
	// StallTimeout is how long a request body may send nothing before the
	// request is refused (400). Zero means 30s.
	StallTimeout time.Duration
	// BodyTimeout bounds the time to receive a whole request body. Zero
	// means 5m.
	BodyTimeout time.Duration
	// MaxPayload is the host's Options.MaxPayload: a JSON request body may
	// hold a payload that large and 1 MiB more. Zero means
	// api.DefaultMaxPayload.
	MaxPayload int
	// Hosts are the names the handler answers to: the values of a
	// request's Host header it serves, each a host name or address alone
	// (for any port) or with a port (for that one), compared without
	// regard to case. A request for another host is refused (421), as a
	// web page's is after DNS rebinding; the health checks answer any.
	// Empty means localhost, 127.0.0.1 and [::1], on any port.
	Hosts []string
	// Metrics, when set, are served at GET /metrics (the host's:
	// host.Options.Metrics), and count the panics of a request
	// (durabox_panics_total{boundary="http"}). Nil serves none.
	Metrics *metrics.Metrics
	// Version is what GET /v1/version answers: what the host was built
	// from (durabox serve gives internal/serving.Version). The zero value
	// answers as it is.
	Version api.Version
}

// minTokenLength is the shortest token New accepts: 16 bytes is
// 128 bits of a random hex or base64 string, past guessing.
const minTokenLength = 16

// Validate fills in defaults and refuses options New cannot use,
// saying why. New calls it; a caller may call it first, to refuse
// bad options before it builds anything.
func (o *Options) Validate() error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	hasAdmin := o.Token != "" || slices.ContainsFunc(o.Tokens, func(t Token) bool { return t.Role == "" || t.Role == RoleAdmin })
	switch {
	case o.ReadToken != "" && !hasAdmin:
		return errors.New("host: a read-only token needs an admin token beside it: with none, nothing could deploy or start")
	case o.ReadToken != "" && o.ReadToken == o.Token:
		return errors.New("host: the read-only token is the admin token; give it a token of its own")
	case o.WorkerToken != "" && !hasAdmin:
		return errors.New("host: a worker token needs an admin token beside it: with none, every request is the admin's and a worker token would limit nothing")
	case o.WorkerToken != "" && (o.WorkerToken == o.Token || o.WorkerToken == o.ReadToken):
		return errors.New("host: the worker token is the admin or the read-only token; give it a token of its own")
	}
	for _, t := range []struct{ name, token string }{{"the admin token", o.Token}, {"the read-only token", o.ReadToken}, {"the worker token", o.WorkerToken}} {
		if t.token != "" && len(t.token) < minTokenLength {
			return fmt.Errorf("host: %s is %d characters; use at least %d random ones (openssl rand -hex 32 makes 64)", t.name, len(t.token), minTokenLength)
		}
		if strings.ContainsAny(t.token, " \t\r\n") {
			return fmt.Errorf("host: %s holds white space; a bearer token cannot", t.name)
		}
	}
	if err := checkTokens(o.allTokens()); err != nil {
		return err
	}
	if len(o.Hosts) == 0 {
		o.Hosts = defaultHosts
	}
	if _, err := newHostNames(o.Hosts); err != nil {
		return err
	}
	if err := option.Fill([]option.Field[int]{{Name: "MaxPayload", Value: &o.MaxPayload, Default: api.DefaultMaxPayload}}); err != nil {
		return err
	}
	return option.Fill([]option.Field[time.Duration]{
		{Name: "StallTimeout", Value: &o.StallTimeout, Default: 30 * time.Second},
		{Name: "BodyTimeout", Value: &o.BodyTimeout, Default: 5 * time.Minute},
	})
}

// allTokens returns Tokens and, named by DefaultName, Token, ReadToken
// and WorkerToken.
func (o *Options) allTokens() []Token {
	all := slices.Clone(o.Tokens)
	for _, t := range []Token{{Secret: o.Token, Role: RoleAdmin}, {Secret: o.ReadToken, Role: RoleRead}, {Secret: o.WorkerToken, Role: RoleWorker}} {
		if t.Secret != "" {
			all = append(all, t)
		}
	}
	return all
}

// TokenSetter is the handler New returns: SetTokens replaces the tokens
// it accepts (Options.Tokens, Token, ReadToken, WorkerToken) with ts, for
// the requests that come after, as serve does on SIGHUP. It refuses ts as
// Options.Validate would, and then keeps the tokens it had. With no
// tokens before, it asks for none after either: a host that asks for no
// token does not begin to, nor stop, without a restart.
type TokenSetter interface {
	SetTokens(ts []Token) error
}

// SetTokens replaces the tokens s accepts (TokenSetter).
func (s *server) SetTokens(ts []Token) error {
	ts = slices.Clone(ts)
	if err := checkTokens(ts); err != nil {
		return err
	}
	if s.tokens.Load().none != (len(ts) == 0) {
		return errors.New("host: a host that asks for a token must keep asking for one, and one that asks for none cannot begin to, without a restart")
	}
	s.tokens.Store(newTokens(ts))
	return nil
}

// New serves a over HTTP with the routes, bodies and statuses that
// package host/client documents and host/server/openapi.json describes (served at
// /v1/openapi.json). Every answer is JSON, refusals included: a path it
// does not serve is a 404, a method it does not serve a 405. The handler
// is a TokenSetter.
func New(a API, opts Options) (http.Handler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	hosts, _ := newHostNames(opts.Hosts) // Validate checked them
	all := opts.allTokens()
	checkTokens(all) // Validate checked them; this names them
	s := &server{api: a, opts: opts, log: opts.Logger, mux: http.NewServeMux(),
		hosts: hosts, crossOrigin: http.NewCrossOriginProtection(), panics: guard.Guard{Log: opts.Logger}}
	s.tokens.Store(newTokens(all))
	var gatherer prometheus.Gatherer = prometheus.NewRegistry()
	if opts.Metrics != nil {
		s.panics.Count, gatherer = opts.Metrics.Panic, opts.Metrics
	}
	s.metrics = promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn), ErrorHandling: promhttp.ContinueOnError})
	for _, rt := range routes {
		s.mux.Handle(rt.method+" "+rt.path, s.guard(rt))
	}
	return s, nil
}

type server struct {
	api  API
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	// tokens are the tokens it accepts; SetTokens replaces them.
	tokens atomic.Pointer[tokens]
	// hosts are the Host headers it serves; crossOrigin tells the
	// requests that a page of another origin sent.
	hosts       hostNames
	crossOrigin *http.CrossOriginProtection
	// metrics serves GET /metrics.
	metrics http.Handler
	// panics recovers a panic serving a request, and counts it in the
	// host's metrics when api is a Host.
	panics guard.Guard
}

// access is what a route needs of a request's token.
type access int

const (
	// public routes need no token: the API's description, the health
	// checks, and the dashboard's files (which hold no data: the
	// dashboard asks for a token before it reads any).
	public access = iota
	// read routes need a token, the read-only one or the admin one.
	read
	// admin routes need the admin token.
	admin
	// worker routes (the worker protocol's) need a worker's token or the
	// admin token.
	worker
)

func (a access) String() string { return [...]string{"public", "read", "admin", "worker"}[a] }

// route is one operation of the API.
type route struct {
	method, path string
	access       access
	serve        func(s *server, w http.ResponseWriter, r *http.Request)
}

// Route is an operation a server serves: its method, its path (as
// OpenAPI writes it: "/{$}", the root alone, is "/"), and the access it
// needs (public, read or admin).
type Route struct{ Method, Path, Access string }

// Routes returns the operations a server serves, in the order it routes
// them. openapi.json describes each (a test holds the two together).
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = Route{rt.method, strings.TrimSuffix(rt.path, "{$}"), rt.access.String()}
	}
	return out
}

// routes are the operations New serves; host/server/openapi.json describes
// each of them (a test holds the two together), with its access.
var routes = []route{
	{"GET", "/v1/openapi.json", public, (*server).openAPI},
	{"POST", "/v1/modules", admin, (*server).deploy},
	{"GET", "/v1/modules", read, (*server).modules},
	{"DELETE", "/v1/modules/{hash}", admin, (*server).removeModule},
	{"POST", "/v1/instances", admin, (*server).start},
	{"GET", "/v1/instances", read, (*server).list},
	{"DELETE", "/v1/instances", admin, (*server).purgeMatching},
	{"GET", "/v1/instances/{id}", read, (*server).instance},
	{"DELETE", "/v1/instances/{id}", admin, (*server).purge},
	{"GET", "/v1/instances/{id}/history", read, (*server).history},
	{"POST", "/v1/instances/{id}/events", admin, (*server).raise},
	{"GET", "/v1/instances/{id}/queries/{name}", read, (*server).query},
	{"POST", "/v1/instances/{id}/queries/{name}", admin, (*server).query},
	{"POST", "/v1/instances/{id}/updates/{name}", admin, (*server).update},
	{"GET", "/v1/instances/{id}/updates/{name}/{updateId}", read, (*server).getUpdate},
	{"GET", "/v1/instances/{id}/handlers", read, (*server).handlers},
	{"POST", "/v1/instances/{id}/cancel", admin, (*server).cancel},
	{"POST", "/v1/instances/{id}/terminate", admin, (*server).terminate},
	{"GET", "/v1/queue", read, (*server).queue},
	{"GET", "/v1/instances/{id}/replay", read, (*server).replay},
	{"GET", "/v1/instances/{id}/bundle", read, (*server).export},
	{"POST", "/v1/instances/{id}/reset", admin, (*server).reset},
	{"POST", "/v1/upgrades", admin, (*server).upgrade},
	{"POST", "/v1/tasks/poll", worker, (*server).pollTasks},
	{"POST", "/v1/tasks/{token}/heartbeat", worker, (*server).heartbeatTask},
	{"POST", "/v1/tasks/{token}/complete", worker, (*server).completeTask},
	{"POST", "/v1/tasks/{token}/fail", worker, (*server).failTask},
	{"POST", "/v1/tasks/{token}/pending", worker, (*server).awaitTask},
	{"POST", "/v1/schedules", admin, (*server).createSchedule},
	{"GET", "/v1/schedules", read, (*server).schedules},
	{"GET", "/v1/schedules/{name}", read, (*server).schedule},
	{"DELETE", "/v1/schedules/{name}", admin, (*server).deleteSchedule},
	{"POST", "/v1/schedules/{name}/pause", admin, (*server).pauseSchedule},
	{"POST", "/v1/schedules/{name}/resume", admin, (*server).resumeSchedule},
	{"POST", "/v1/schedules/{name}/trigger", admin, (*server).triggerSchedule},
	{"POST", "/v1/batches", admin, (*server).startBatch},
	{"GET", "/v1/batches", admin, (*server).batches},
	{"GET", "/v1/batches/{id}", admin, (*server).batch},
	{"POST", "/v1/batches/{id}/stop", admin, (*server).stopBatch},
	{"GET", "/v1/audit", admin, (*server).audit},
	{"GET", "/v1/access", read, (*server).access},
	{"GET", "/v1/version", read, (*server).version},
	{"GET", "/healthz", public, (*server).healthz},
	{"GET", "/readyz", public, (*server).readyz},
	{"GET", "/metrics", read, (*server).serveMetrics},
	{"GET", "/{$}", public, (*server).dashboard},
	{"GET", "/ui/{file}", public, (*server).dashboardFile},
}

// ServeHTTP answers a request with its route, or with a JSON 404 or 405
// when there is none, and logs it.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	rec := &recorder{ResponseWriter: w}
	s.serve(rec, r)
	// The path alone: the query is the client's, and the token is in a
	// header, never logged.
	took := time.Since(began)
	s.log.Log(r.Context(), requestLevel(r, rec.status, took), "request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", took)
}

// slowRequest is how long a request may take before its line is logged
// at warn level (a long poll's wait not counted).
const slowRequest = 5 * time.Second

// requestLevel is the level of a request's line: warn when it failed
// (5xx) or was slow, debug otherwise. A host under load answers hundreds
// of requests a second; a line for each at info level would be most of
// its log (1.3 GiB a day at 100 starts a second). A slow refusal (4xx) is
// the client's doing, such as a body that stalls, not the host's; so is a
// 503 for a request that ended under its handler (a worker's long poll
// whose client went away, or any request as the host stops): nobody was
// there to be told, and nothing failed.
func requestLevel(r *http.Request, status int, took time.Duration) slog.Level {
	slow := took > slowRequest && !r.URL.Query().Has("wait") && status < http.StatusBadRequest
	if status == http.StatusServiceUnavailable && r.Context().Err() != nil {
		return slog.LevelDebug
	}
	if status >= http.StatusInternalServerError || slow {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// serve answers a request with its route, or as noRoute does. A panic
// answers 500, or, when the answer had begun, aborts it.
func (s *server) serve(w *recorder, r *http.Request) {
	defer s.panics.Catch(guard.HTTP, func(p *guard.Panic) {
		if w.status != 0 {
			panic(http.ErrAbortHandler)
		}
		body, _ := json.Marshal(api.ErrorResponse{Error: fmt.Sprintf("the host panicked serving %s %s (a bug in durabox; its log has the stack)", r.Method, r.URL.Path)})
		write(w, http.StatusInternalServerError, body)
	}, "method", r.Method, "path", r.URL.Path)
	guard.MayPanic(guard.PointHTTP, r.URL.Path)
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.noRoute(w, r)
	} else {
		s.mux.ServeHTTP(w, r)
	}
}

// noRoute answers a request no route serves: 405, with the methods the
// path has, or 404.
func (s *server) noRoute(w http.ResponseWriter, r *http.Request) {
	// The mux's own answer says which; its text body is replaced.
	probe := &recorder{ResponseWriter: discard{header: http.Header{}}}
	h, _ := s.mux.Handler(r)
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.Header().Get("Allow")
		w.Header().Set("Allow", allow)
		s.fail(w, r, fmt.Errorf("%w: %s is not served for %s; it serves %s", errMethod, r.Method, r.URL.Path, allow))
		return
	}
	s.fail(w, r, fmt.Errorf("%w: %s; the API is described at /v1/openapi.json", errNoRoute, r.URL.Path))
}

// recorder passes a response on and keeps its status.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (for read
// deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discard is a ResponseWriter that keeps headers and drops the rest.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

func (s *server) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.fail(w, r, fmt.Errorf("host: encode the answer: %w", err))
		return
	}
	write(w, status, validUTF8(body))
}

// validUTF8 returns JSON as json.Marshal wrote it, made valid UTF-8.
// Marshal makes strings valid, but writes a json.RawMessage (an input, a
// result, an event's data) as it is, and one stored by an older host,
// which did not refuse them, may hold bytes that are not UTF-8; they can
// only be inside its strings, where each run of them becomes U+FFFD, so
// that the answer is JSON.
func validUTF8(body []byte) []byte {
	if utf8.Valid(body) {
		return body
	}
	return bytes.ToValidUTF8(body, []byte("\uFFFD"))
}

// Errors of the HTTP layer itself.
var (
	errNoRoute      = errors.New("host: no such path")
	errMethod       = errors.New("host: method not allowed")
	errUnauthorized = errors.New("host: unauthorized")
	errForbidden    = errors.New("host: forbidden")
	errMisdirected  = errors.New("host: misdirected request")
	errMediaType    = errors.New("host: unsupported media type")
)

// statuses maps errors to the statuses they answer with; anything else
// answers 500.
var statuses = []struct {
	err    error
	status int
}{
	{api.ErrBadInput, http.StatusBadRequest},
	{errUnauthorized, http.StatusUnauthorized},
	{errForbidden, http.StatusForbidden},
	{errMisdirected, http.StatusMisdirectedRequest},
	{errMediaType, http.StatusUnsupportedMediaType},
	{api.ErrNotFound, http.StatusNotFound},
	{api.ErrExecutionNotFound, http.StatusNotFound},
	{api.ErrModuleNotFound, http.StatusNotFound},
	{api.ErrScheduleNotFound, http.StatusNotFound},
	{api.ErrBatchNotFound, http.StatusNotFound},
	{api.ErrBatchNotRunning, http.StatusConflict},
	{errNoRoute, http.StatusNotFound},
	{errMethod, http.StatusMethodNotAllowed},
	{api.ErrInstanceExists, http.StatusConflict},
	{api.ErrScheduleExists, http.StatusConflict},
	{api.ErrNotFinished, http.StatusConflict},
	{api.ErrFinished, http.StatusConflict},
	{api.ErrTooManyEvents, http.StatusConflict},
	{api.ErrModuleInUse, http.StatusConflict},
	{api.ErrBusy, http.StatusConflict},
	{api.ErrChanged, http.StatusConflict},
	{api.ErrDiverges, http.StatusUnprocessableEntity},
	{api.ErrUnknownQuery, http.StatusNotFound},
	{api.ErrQueryFailed, http.StatusUnprocessableEntity},
	{api.ErrNotQueryable, http.StatusConflict},
	{api.ErrNotUpdatable, http.StatusConflict},
	{api.ErrTaskLost, http.StatusConflict},
	{api.ErrTooLarge, http.StatusRequestEntityTooLarge},
	{api.ErrBadModule, http.StatusUnprocessableEntity},
	{api.ErrCannotRun, http.StatusUnprocessableEntity},
	{api.ErrNotReady, http.StatusServiceUnavailable},
	{store.ErrFull, http.StatusServiceUnavailable},
	{store.ErrDiskFailed, http.StatusServiceUnavailable},
	{store.ErrUnavailable, http.StatusServiceUnavailable},
	{api.ErrUnknownOrchestration, http.StatusUnprocessableEntity},
}

// fail answers with err. On the wire the message loses its "host: " prefix:
// it is the host that speaks there.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	for _, m := range statuses {
		if errors.Is(err, m.err) {
			status = m.status
			break
		}
	}
	if status == http.StatusInternalServerError && r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		// The request ended under the handler: the host is stopping, or
		// the client went away. Not the host's fault; a client may ask
		// again.
		status, err = http.StatusServiceUnavailable, fmt.Errorf("host: the host is stopping; ask again: %w", err)
	}
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if n := note(r); n != nil {
		n.detail = wireError(err)
	}
	body, _ := json.Marshal(api.ErrorResponse{Error: wireError(err)})
	write(w, status, body)
}

// wireError is an error's text on the wire: without its "host: " prefix,
// as it is the host that speaks there.
func wireError(err error) string { return strings.TrimPrefix(err.Error(), "host: ") }

func write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
