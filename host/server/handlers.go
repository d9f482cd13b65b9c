package server

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/query"
)

// openAPIDocument describes the API New serves (see RATIONALE.md,
// "Why is the OpenAPI document written by hand?").
//
//go:embed openapi.json
var openAPIDocument []byte

func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDocument)
}

func (s *server) deploy(w http.ResponseWriter, r *http.Request) {
	d, err := s.readDeployment(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var info store.ModuleInfo
	if d.replaceEnv {
		info, err = s.api.DeployWithEnv(r.Context(), d.wasm, d.env)
	} else {
		info, err = s.api.Deploy(r.Context(), d.wasm)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, info.Hash, "orchestrations "+strings.Join(info.Orchestrations, ", "))
	s.reply(w, r, http.StatusCreated, wireModule(info, nil))
}

func (s *server) modules(w http.ResponseWriter, r *http.Request) {
	infos, err := s.api.Modules(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	counts, err := s.api.Count(r.Context(), store.InstanceFilter{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := api.ModulesResponse{Modules: make([]api.Module, len(infos))}
	for i, info := range infos {
		resp.Modules[i] = wireModule(info, counts)
		if err := s.api.Refused(info.Hash); err != nil {
			resp.Modules[i].Refused = wireError(err)
		}
	}
	s.reply(w, r, http.StatusOK, resp)
}

// wireModule shows a module to clients, with the instances that run on it
// per status (of counts): the names of its environment variables, never
// their values.
func wireModule(m store.ModuleInfo, counts []store.InstanceCount) api.Module {
	mod := api.Module{Hash: m.Hash, Orchestrations: m.Orchestrations, Activities: m.Activities, DeployedAt: m.DeployedAt}
	if len(m.Env) > 0 {
		mod.EnvKeys = m.EnvKeys()
	}
	if mod.Orchestrations == nil {
		mod.Orchestrations = []string{}
	}
	if mod.Activities == nil {
		mod.Activities = []string{}
	}
	for _, c := range counts {
		if c.ModuleHash == m.Hash {
			if mod.Instances == nil {
				mod.Instances = map[engine.Status]int{}
			}
			mod.Instances[c.Status] = c.Count
		}
	}
	return mod
}

// removeModule removes the module its path names by its hash or by a
// prefix of it that no other deployed module's hash has, as the command
// line takes it.
func (s *server) removeModule(w http.ResponseWriter, r *http.Request) {
	mods, err := s.api.Modules(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hashes := make([]string, len(mods))
	for i, m := range mods {
		hashes[i] = m.Hash
	}
	hash, err := api.PickModule(hashes, r.PathValue("hash"))
	if err == nil {
		err = s.api.RemoveModule(r.Context(), hash)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.RemovedResponse{Hash: hash})
}

const (
	startExample  = `{"name": "Greeting", "input": "world"}`
	raiseExample  = `{"name": "Approval", "data": true}`
	cancelExample = `{"reason": "the order was withdrawn"}`
	queryExample  = `{"data": {"detail": true}}`
)

func (s *server) start(w http.ResponseWriter, r *http.Request) {
	var req api.StartRequest
	if err := s.readJSON(w, r, startExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Name == "" {
		s.fail(w, r, fmt.Errorf(`%w: the request has no "name": say which orchestration to start`, api.ErrBadInput))
		return
	}
	if len(req.Input) == 0 {
		req.Input = json.RawMessage("null")
	}
	noteChange(r, req.ID, "orchestration "+abi.Quote(req.Name))
	if req.Update != nil {
		noteChange(r, req.ID, fmt.Sprintf("orchestration %s with update %s", abi.Quote(req.Name), abi.Quote(req.Update.Name)))
		s.startWithUpdate(w, r, req)
		return
	}
	if req.Raise != nil {
		s.startWithEvent(w, r, req)
		return
	}
	id, err := s.api.StartOn(withRecord(r, http.StatusCreated), req.Module, req.Name, req.Input, req.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, id, "orchestration "+abi.Quote(req.Name))
	s.reply(w, r, http.StatusCreated, api.StartResponse{ID: id})
}

// startWithEvent serves a start with an event (signal with start): 201
// when it started the instance, 200 when the instance was there.
func (s *server) startWithEvent(w http.ResponseWriter, r *http.Request, req api.StartRequest) {
	if req.Raise.Name == "" {
		s.fail(w, r, fmt.Errorf(`%w: the request's "raise" has no "name": say which event to raise`, api.ErrBadInput))
		return
	}
	noteChange(r, req.ID, fmt.Sprintf("orchestration %s with event %s", abi.Quote(req.Name), abi.Quote(req.Raise.Name)))
	started, err := s.api.StartWithEvent(withRecord(r, http.StatusCreated), req.Module, req.Name, req.Input, req.ID, *req.Raise)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	code := http.StatusOK
	if started {
		code = http.StatusCreated
	}
	s.reply(w, r, code, api.StartResponse{ID: req.ID, Started: &started})
}

func (s *server) raise(w http.ResponseWriter, r *http.Request) {
	var req api.RaiseRequest
	if err := s.readJSON(w, r, raiseExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(req.Data) == 0 {
		req.Data = json.RawMessage("null")
	}
	noteChange(r, "", "event "+abi.Quote(req.Name))
	if err := s.api.Raise(withRecord(r, http.StatusAccepted), r.PathValue("id"), req.Name, req.Data, req.Persistent); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusAccepted, req)
}

// query runs a query: its argument is the parameter data of a GET, or the
// data of a POST's body (optional).
func (s *server) query(w http.ResponseWriter, r *http.Request) {
	var req api.QueryRequest
	if r.Method == http.MethodPost {
		if err := s.readJSON(w, r, queryExample, &req, true); err != nil {
			s.fail(w, r, err)
			return
		}
	} else if v := r.URL.Query().Get("data"); v != "" {
		req.Data = json.RawMessage(v)
	}
	out, err := s.api.Query(r.Context(), r.PathValue("id"), r.PathValue("name"), req.Data)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.QueryResponse{Result: out})
}

func (s *server) cancel(w http.ResponseWriter, r *http.Request) {
	s.request(w, r, s.api.Cancel)
}

func (s *server) terminate(w http.ResponseWriter, r *http.Request) {
	s.request(w, r, s.api.Terminate)
}

// request serves a request to cancel or terminate an instance, whose
// body (a reason) is optional.
func (s *server) request(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, id, reason string) error) {
	var req api.CancelRequest
	if err := s.readJSON(w, r, cancelExample, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Reason != "" {
		noteChange(r, "", "reason "+abi.Quote(req.Reason))
	}
	if err := do(withRecord(r, http.StatusAccepted), r.PathValue("id"), req.Reason); err != nil {
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
	s.reply(w, r, http.StatusOK, api.PurgeResponse{ID: id})
}

func (s *server) purgeMatching(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	dryRun, err := boolParam(q, "dryRun")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q.Del("dryRun")
	if len(q) == 0 {
		s.fail(w, r, fmt.Errorf("%w: say which finished instances to purge, with the filters of GET /v1/instances (status, finishedBefore, name, …); "+
			"status=Completed&status=Failed&status=Canceled&status=Terminated takes them all", api.ErrBadInput))
		return
	}
	f, err := parseFilter(q, "purge")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n, err := s.api.PurgeMatching(r.Context(), f, dryRun)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	what := "purged"
	if dryRun {
		what = "would purge (dry run)"
	}
	noteChange(r, "", fmt.Sprintf("%s %d instances matching %s", what, n, r.URL.RawQuery))
	s.reply(w, r, http.StatusOK, api.PurgedResponse{Purged: n, DryRun: dryRun})
}

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := parseFilter(q, "list")
	if err == nil {
		err = s.parseWaits(q, &f)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			s.fail(w, r, fmt.Errorf("%w: limit=%s is not a number from 1 to %d", api.ErrBadInput, abi.Quote(v), api.MaxPage))
			return
		}
	}
	page, err := s.api.List(r.Context(), store.InstanceQuery{Filter: f, After: q.Get("cursor"), Limit: limit})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.InstancesResponse{Instances: wireSummaries(page.Instances), Next: page.Next})
}

func wireSummaries(in []store.InstanceSummary) []api.InstanceSummary {
	out := make([]api.InstanceSummary, len(in))
	for i, sum := range in {
		out[i] = api.InstanceSummary(sum)
	}
	return out
}

// filterParams are the query parameters of GET and DELETE /v1/instances,
// beside limit, cursor and dryRun, and waitParams those only GET takes.
var (
	filterParams = []string{"status", "name", "module", "idPrefix", "parent", "createdAfter", "createdBefore", "finishedBefore", "where"}
	waitParams   = []string{"stalledFor", "waitingOn"}
)

// parseWaits reads the stalledFor and waitingOn of GET /v1/instances into
// f: the instances not finished that no turn changed for that long (by
// the host's clock), and those that wait on any of those kinds.
func (s *server) parseWaits(q url.Values, f *store.InstanceFilter) error {
	if v := q.Get("stalledFor"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%w: stalledFor=%s is not a duration above 0 such as 10m", api.ErrBadInput, abi.Quote(v))
		}
		f.ProgressedBefore = s.api.Now().Add(-d)
	}
	for _, v := range q["waitingOn"] {
		for _, k := range strings.Split(v, ",") {
			f.WaitingOn = append(f.WaitingOn, engine.WaitKind(strings.TrimSpace(k)))
		}
	}
	if err := f.Check(); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	return nil
}

// parseFilter reads the filter of GET /v1/instances (op "list", which
// also takes limit and cursor), of DELETE /v1/instances (op "purge",
// whose dryRun the caller has taken out of q), or of POST /v1/batches (op
// "batch"); the caller reads stalledFor and waitingOn (parseWaits).
func parseFilter(q url.Values, op string) (store.InstanceFilter, error) {
	var f store.InstanceFilter
	takes := filterParams
	switch op {
	case "list":
		takes = append(slices.Concat(takes, waitParams), "limit", "cursor")
	case "batch":
		takes = slices.Concat(takes, waitParams)
	}
	for name := range q {
		if !slices.Contains(takes, name) {
			return f, fmt.Errorf("%w: %s takes no parameter %s; it takes %s", api.ErrBadInput, op, abi.Quote(name), strings.Join(takes, ", "))
		}
	}
	for _, v := range q["status"] {
		for _, s := range strings.Split(v, ",") {
			f.Statuses = append(f.Statuses, engine.Status(strings.TrimSpace(s)))
		}
	}
	f.Name, f.ModuleHash, f.IDPrefix, f.ParentID = q.Get("name"), q.Get("module"), q.Get("idPrefix"), q.Get("parent")
	for _, t := range []struct {
		name string
		v    *time.Time
	}{{"createdAfter", &f.CreatedAfter}, {"createdBefore", &f.CreatedBefore}, {"finishedBefore", &f.FinishedBefore}} {
		v := q.Get(t.name)
		if v == "" {
			continue
		}
		var err error
		if *t.v, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return f, fmt.Errorf("%w: %s=%s is not a time such as 2026-01-02T15:04:05Z (RFC 3339)", api.ErrBadInput, t.name, abi.Quote(v))
		}
	}
	if v := q.Get("where"); v != "" {
		var err error
		if f.Where, err = query.Parse(v); err != nil {
			return f, fmt.Errorf("%w: where=%s: %w", api.ErrBadInput, abi.Quote(v), err)
		}
	}
	if err := f.Check(); err != nil {
		return f, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	return f, nil
}

// boolParam reads an optional true/false query parameter.
func boolParam(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%s is not true or false", api.ErrBadInput, name, abi.Quote(v))
	}
	return b, nil
}

// childrenShown is how many children GET /v1/instances/{id} lists.
const childrenShown = 100

func (s *server) instance(w http.ResponseWriter, r *http.Request) {
	d, err := parseWait(r.URL.Query().Get("wait"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	brief, err := boolParam(r.URL.Query(), "brief")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	inst, err := s.get(r.Context(), id, d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if brief {
		// The instance alone: what else it holds costs reads (a waiting
		// client's answer had four where one does).
		s.reply(w, r, http.StatusOK, api.Instance(inst))
		return
	}
	details := api.InstanceDetails{Instance: api.Instance(inst)}
	for _, p := range []struct {
		what  string
		value *json.RawMessage
	}{{"input", &details.Input}, {"result", &details.Result}} {
		if len(*p.value) > 0 && !json.Valid(*p.value) {
			// Only a damaged or edited row holds one.
			*p.value, _ = json.Marshal(string(*p.value))
			details.Warnings = append(details.Warnings, "the stored "+p.what+" is not JSON (the database was damaged or edited); it is shown as a string of its bytes")
		}
	}
	xs, err := s.api.Executions(r.Context(), id)
	if err == nil {
		var attrs []abi.Attribute
		attrs, err = s.api.Attributes(r.Context(), id)
		if len(attrs) > 0 {
			details.Attributes = api.Attributes(attrs)
		}
	}
	if err == nil {
		var page store.InstancePage
		page, err = s.api.List(r.Context(), store.InstanceQuery{Filter: store.InstanceFilter{ParentID: id}, Limit: childrenShown})
		details.Children, details.ChildrenNext = wireSummaries(page.Instances), page.Next
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	details.Executions = make([]api.Execution, len(xs))
	for i, x := range xs {
		details.Executions[i] = api.Execution{ID: x.ID, Events: x.Events, StartedAt: timeOrNil(x.StartedAt), EndedAt: timeOrNil(x.EndedAt), End: x.End}
		if w := historyWarning(x.Events, s.api.HistoryWarning()); w != "" && x.ID == inst.ExecutionID {
			details.Warnings = append(details.Warnings, w)
		}
	}
	if !inst.Status.IsTerminal() {
		details.LastProgress = &details.UpdatedAt
		details.WaitingOn, err = s.api.Waits(r.Context(), id)
		switch {
		case errors.Is(err, store.ErrCorrupt):
			// Only a damaged or edited row holds one; its next turn writes
			// it again.
			details.Warnings = append(details.Warnings, "what it waits on cannot be read (the database was damaged or edited): "+err.Error())
		case err != nil:
			s.fail(w, r, err)
			return
		}
	}
	if err := s.api.Refused(inst.ModuleHash); err != nil && !inst.Status.IsTerminal() {
		details.Warnings = append(details.Warnings, "it waits for a host that can run its module: "+wireError(err))
	}
	if ws, ok := s.api.(Workers); ok && !inst.Status.IsTerminal() {
		if details.Activities, err = ws.PendingActivities(r.Context(), id); err != nil {
			s.fail(w, r, err)
			return
		}
		for _, a := range details.Activities {
			if a.NoWorker {
				details.Warnings = append(details.Warnings, fmt.Sprintf("its call of %s waits on task queue %s, which no worker has polled (through this host, since it started)", a.Activity, a.Queue))
			}
		}
	}
	s.reply(w, r, http.StatusOK, details)
}

// timeOrNil returns nil for the zero time, which the wire leaves out.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// maxWait bounds the ?wait of GET /v1/instances/{id}.
const maxWait = 60 * time.Second

// parseWait reads the ?wait of GET /v1/instances/{id}. Empty means do not
// wait; past maxWait means maxWait.
func parseWait(q string) (time.Duration, error) {
	if q == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(q)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: wait=%s is not a duration such as 30s", api.ErrBadInput, abi.Quote(q))
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
			s.fail(w, r, fmt.Errorf("%w: execution=%s is not an execution number (1, 2, …)", api.ErrBadInput, abi.Quote(v)))
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
	s.reply(w, r, http.StatusOK, api.HistoryResponse{Events: events})
}

func (s *server) queue(w http.ResponseWriter, r *http.Request) {
	q, err := s.api.Queue(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.QueueResponse{
		Ready: q.Ready, ReadyInstances: q.ReadyInstances, Starts: q.Starts, OldestReady: wireItem(q.OldestReady),
		Timers: q.Timers, NextTimer: timeOrNil(q.NextTimer), Running: q.Locked,
		Activities: q.Activities, ActivitiesRunning: q.Running, OldestActivity: wireItem(q.OldestActivity),
		TaskQueues: s.taskQueues(q.Queues),
	})
}

func wireItem(w *store.WaitingItem) *api.WaitingItem {
	if w == nil {
		return nil
	}
	item := api.WaitingItem(*w)
	return &item
}

// historyWarning returns the warning GET /v1/instances/{id} gives for an
// execution of events events, when past the warning at threshold, or "".
func historyWarning(events int64, threshold int) string {
	if events <= int64(threshold) {
		return ""
	}
	return fmt.Sprintf("the history of the current execution has %d events, past the warning at %d (serve --history-warning): "+
		"every cold replay reads all of them; an orchestration that runs for ever should continue as new", events, threshold)
}
