package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/store"
)

// API is what NewHandler serves: the operations of a Host.
type API interface {
	Deploy(ctx context.Context, wasm []byte, env []string) (store.ModuleInfo, error)
	StartOn(ctx context.Context, module, name string, input json.RawMessage, id string) (string, error)
	Instance(ctx context.Context, id string) (store.Instance, error)
	Wait(ctx context.Context, id string) (store.Instance, error)
	ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error)
	Raise(ctx context.Context, id, name string, data json.RawMessage, persistent bool) error
	Cancel(ctx context.Context, id, reason string) error
	Purge(ctx context.Context, id string) error
	List(ctx context.Context) ([]store.Instance, error)
	Modules(ctx context.Context) ([]store.ModuleInfo, error)
	Replay(ctx context.Context, id string, req client.ReplayRequest) (client.ReplayReport, error)
	Upgrade(ctx context.Context, req client.UpgradeRequest, progress func(client.UpgradeLine)) (client.UpgradeReport, error)
	Export(ctx context.Context, id string) (*bundle.Bundle, error)
	Reset(ctx context.Context, id string, req client.ResetRequest) (client.ResetPlan, error)
}

var _ API = (*Host)(nil)

const (
	// maxModuleBytes bounds the body of POST /v1/modules.
	maxModuleBytes = 64 << 20
	// maxStartBytes bounds the body of POST /v1/instances.
	maxStartBytes = 16 << 20
	// maxWait bounds the ?wait of GET /v1/instances/{id}.
	maxWait = 60 * time.Second
)

// errTooLarge is returned when a request body is over its limit.
var errTooLarge = errors.New("host: request too large")

// NewHandler serves api over HTTP with the routes, bodies and statuses that
// package host/client documents, and logs (once) every error it answers
// with 500. A nil logger discards.
func NewHandler(api API, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &server{api: api, log: logger}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/modules", s.deploy)
	mux.HandleFunc("GET /v1/modules", s.modules)
	mux.HandleFunc("POST /v1/instances", s.start)
	mux.HandleFunc("GET /v1/instances", s.list)
	mux.HandleFunc("GET /v1/instances/{id}", s.instance)
	mux.HandleFunc("GET /v1/instances/{id}/history", s.history)
	mux.HandleFunc("POST /v1/instances/{id}/events", s.raise)
	mux.HandleFunc("POST /v1/instances/{id}/cancel", s.cancel)
	mux.HandleFunc("DELETE /v1/instances/{id}", s.purge)
	mux.HandleFunc("GET /v1/instances/{id}/replay", s.replay)
	mux.HandleFunc("GET /v1/instances/{id}/bundle", s.export)
	mux.HandleFunc("POST /v1/instances/{id}/reset", s.reset)
	mux.HandleFunc("POST /v1/upgrades", s.upgrade)
	return mux
}

type server struct {
	api API
	log *slog.Logger
}

func (s *server) deploy(w http.ResponseWriter, r *http.Request) {
	wasm, err := readBody(w, r, maxModuleBytes, "the module")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	info, err := s.api.Deploy(r.Context(), wasm, r.URL.Query()["env"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusCreated, wireModule(info))
}

func (s *server) modules(w http.ResponseWriter, r *http.Request) {
	infos, err := s.api.Modules(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := client.ModulesResponse{Modules: make([]client.Module, len(infos))}
	for i, info := range infos {
		resp.Modules[i] = wireModule(info)
	}
	s.reply(w, r, http.StatusOK, resp)
}

func (s *server) start(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, maxStartBytes, "the request")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req, err := decodeStart(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id, err := s.api.StartOn(r.Context(), req.Module, req.Name, req.Input, req.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusCreated, client.StartResponse{ID: id})
}

const (
	startExample  = `{"name": "Greeting", "input": "world"}`
	raiseExample  = `{"name": "Approval", "data": true}`
	cancelExample = `{"reason": "the order was withdrawn"}`
)

// decodeStart reads the body of POST /v1/instances: one JSON object with a
// name. A missing input becomes JSON null.
func decodeStart(body []byte) (client.StartRequest, error) {
	var req client.StartRequest
	if err := decodeObject(body, startExample, &req); err != nil {
		return req, err
	}
	if req.Name == "" {
		return req, fmt.Errorf(`%w: the request has no "name": say which orchestration to start`, ErrBadInput)
	}
	if len(req.Input) == 0 {
		req.Input = json.RawMessage("null")
	}
	return req, nil
}

// decodeObject decodes a request body that must be exactly one JSON object
// of v's fields, such as example.
func decodeObject(body []byte, example string, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fmt.Errorf("%w: the request body is empty; send a JSON object such as %s", ErrBadInput, example)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: the request body is not a JSON object such as %s: %v", ErrBadInput, example, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: the request body goes on after its JSON object", ErrBadInput)
	}
	return nil
}

func (s *server) raise(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, maxStartBytes, "the request")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req client.RaiseRequest
	if err := decodeObject(body, raiseExample, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(req.Data) == 0 {
		req.Data = json.RawMessage("null")
	}
	if err := s.api.Raise(r.Context(), r.PathValue("id"), req.Name, req.Data, req.Persistent); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusAccepted, req)
}

func (s *server) cancel(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, maxStartBytes, "the request")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req client.CancelRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeObject(body, cancelExample, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if err := s.api.Cancel(r.Context(), r.PathValue("id"), req.Reason); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusAccepted, req)
}

func (s *server) purge(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.api.Purge(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, client.PurgeResponse{ID: id})
}

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	insts, err := s.api.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := client.InstancesResponse{Instances: make([]client.Instance, len(insts))}
	for i, inst := range insts {
		resp.Instances[i] = client.Instance(inst)
	}
	s.reply(w, r, http.StatusOK, resp)
}

func (s *server) instance(w http.ResponseWriter, r *http.Request) {
	d, err := parseWait(r.URL.Query().Get("wait"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	inst, err := s.get(r.Context(), r.PathValue("id"), d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, client.Instance(inst))
}

// parseWait reads the ?wait of GET /v1/instances/{id}. Empty means do not
// wait; past maxWait means maxWait.
func parseWait(q string) (time.Duration, error) {
	if q == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(q)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: wait=%q is not a duration such as 30s", ErrBadInput, q)
	}
	return min(d, maxWait), nil
}

// get returns an instance once it is terminal or d has passed, whichever is
// first.
func (s *server) get(ctx context.Context, id string, d time.Duration) (store.Instance, error) {
	if d == 0 {
		return s.api.Instance(ctx, id)
	}
	waitCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	inst, err := s.api.Wait(waitCtx, id)
	if err != nil && waitCtx.Err() != nil && ctx.Err() == nil {
		// The wait ran out as Wait read the instance: read it again.
		return s.api.Instance(ctx, id)
	}
	return inst, err
}

func (s *server) history(w http.ResponseWriter, r *http.Request) {
	var execution int64
	if v := r.URL.Query().Get("execution"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			s.fail(w, r, fmt.Errorf("%w: execution=%q is not an execution number (1, 2, …)", ErrBadInput, v))
			return
		}
		execution = n
	}
	events, err := s.api.ExecutionHistory(r.Context(), r.PathValue("id"), execution)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if events == nil {
		events = []engine.Event{}
	}
	s.reply(w, r, http.StatusOK, client.HistoryResponse{Events: events})
}

// readBody reads a request body of at most limit bytes; what names it in
// the error.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("%w: %s is larger than the limit of %d MiB", errTooLarge, what, limit>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("host: read %s: %w", what, err)
	}
	return body, nil
}

// wireModule shows a module to clients: the names of its environment
// variables, never their values.
func wireModule(m store.ModuleInfo) client.Module {
	mod := client.Module{Hash: m.Hash, Orchestrations: m.Orchestrations, Activities: m.Activities, DeployedAt: m.DeployedAt}
	for _, kv := range m.Env {
		k, _, _ := strings.Cut(kv, "=")
		mod.EnvKeys = append(mod.EnvKeys, k)
	}
	if mod.Orchestrations == nil {
		mod.Orchestrations = []string{}
	}
	if mod.Activities == nil {
		mod.Activities = []string{}
	}
	return mod
}

func (s *server) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.fail(w, r, fmt.Errorf("host: encode the answer: %w", err))
		return
	}
	write(w, status, body)
}

// statuses maps errors to the statuses they answer with; anything else
// answers 500.
var statuses = []struct {
	err    error
	status int
}{
	{ErrBadInput, http.StatusBadRequest},
	{ErrNotFound, http.StatusNotFound},
	{ErrInstanceExists, http.StatusConflict},
	{ErrNotFinished, http.StatusConflict},
	{ErrUnknownModule, http.StatusNotFound},
	{ErrBusy, http.StatusConflict},
	{ErrChanged, http.StatusConflict},
	{ErrDiverges, http.StatusUnprocessableEntity},
	{errTooLarge, http.StatusRequestEntityTooLarge},
	{ErrBadModule, http.StatusUnprocessableEntity},
	{ErrUnknownOrchestration, http.StatusUnprocessableEntity},
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
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body, _ := json.Marshal(client.ErrorResponse{Error: wireError(err)})
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
