// Package fakehost is a stand-in for a Durabox host, in memory and without
// wasm: it implements host.API, so that tests of the HTTP server, the client
// and the command line can run it behind host/server.
//
// Its orchestrations are Go functions. Deploy accepts any bytes as a module
// that registers them all. Start creates a Pending instance; an instance
// runs only when waited for: Wait calls its orchestration, whose result
// completes the instance, whose error fails it, and ErrStillRunning leaves
// it Running. Time starts at 2025-01-02T03:04:05Z and moves one second with
// every change. What needs a module's code (replay, upgrade, export,
// reset) it refuses with ErrNoWasm.
//
// It does not filter: List, Count and PurgeMatching take every instance,
// and keep the query or filter they were given (Query, Filter) for the
// test to check; List pages by position. (Its instances have no parents,
// so a filter by parent selects none.) The store's conformance suite tests
// filters.
package fakehost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
)

// Orchestration is a fake orchestration: it returns its result, or an
// error to fail with, or ErrStillRunning.
type Orchestration func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)

// ErrStillRunning, from an Orchestration, leaves its instance Running.
var ErrStillRunning = errors.New("fakehost: still running")

// ErrNoWasm is what the operations that need a module's code (replay,
// upgrade, export, reset) return: the fake runs none.
var ErrNoWasm = errors.New("fakehost: replay, upgrade, export and reset need a real host: the fake runs no wasm")

// Replay returns ErrNoWasm.
func (h *Host) Replay(context.Context, string, api.ReplayRequest) (api.ReplayReport, error) {
	return api.ReplayReport{}, ErrNoWasm
}

// Upgrade returns ErrNoWasm.
func (h *Host) Upgrade(context.Context, api.UpgradeRequest, func(api.UpgradeLine)) (api.UpgradeReport, error) {
	return api.UpgradeReport{}, ErrNoWasm
}

// Export returns ErrNoWasm.
func (h *Host) Export(context.Context, string) (*bundle.Bundle, error) { return nil, ErrNoWasm }

// Reset returns ErrNoWasm.
func (h *Host) Reset(context.Context, string, api.ResetRequest) (api.ResetPlan, error) {
	return api.ResetPlan{}, ErrNoWasm
}

// Host is a fake host. It is safe for concurrent use.
type Host struct {
	orchestrations map[string]Orchestration

	mu        sync.Mutex
	now       time.Time
	modules   []store.ModuleInfo // newest first
	instances []store.Instance   // newest first
	history   map[string][]engine.Event
	fail      map[string]error
	deployed  [][]byte
	raised    []api.RaiseRequest
	cancelled []string
	query     store.InstanceQuery
	filter    store.InstanceFilter
	queue     store.QueueStats
	// historyWarning is what HistoryWarning returns; zero means the host's
	// default.
	historyWarning int
	// refused holds what Refused returns, by module hash.
	refused map[string]error
	// queries are the query handlers every instance has, by name.
	queries map[string]QueryHandler
	// updateHandlers are the update handlers every instance has, by name;
	// updates the updates sent, by instance and update id.
	updateHandlers map[string]UpdateHandler
	updates        map[string]store.Update
	attributes     map[string][]abi.Attribute
	// schedules are the schedules, by name (schedules.go).
	schedules []api.Schedule
	// batches are the batches, oldest first (batches.go).
	batches []api.Batch
	// waits are what Waits returns, by instance id.
	waits map[string][]engine.Wait
}

// QueryHandler is a fake query handler: it answers the query of instance
// id with argument data, or fails it with an error.
type QueryHandler func(id string, data json.RawMessage) (json.RawMessage, error)

var _ server.API = (*Host)(nil)

// New returns a fake host that knows the orchestrations (and nothing is
// deployed yet).
func New(orchestrations map[string]Orchestration) *Host {
	return &Host{
		orchestrations: orchestrations,
		now:            time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		history:        map[string][]engine.Event{},
		fail:           map[string]error{},
		queries:        map[string]QueryHandler{},
		updateHandlers: map[string]UpdateHandler{},
		updates:        map[string]store.Update{},
		waits:          map[string][]engine.Wait{},
		attributes:     map[string][]abi.Attribute{},
	}
}

// HandleQuery gives every instance the query name, answered by fn.
func (h *Host) HandleQuery(name string, fn QueryHandler) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queries[name] = fn
}

// Query answers the query name of instance id with the handler
// HandleQuery gave, as a host does: an instance that does not exist is
// ErrNotFound, a name no handler has ErrUnknownQuery (listing those there
// are), and a handler's error is ErrQueryFailed. It records nothing.
func (h *Host) Query(ctx context.Context, id, name string, data json.RawMessage) (json.RawMessage, error) {
	if err := h.failure("Query"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	_, found := h.find(id)
	fn, ok := h.queries[name]
	names := slices.Sorted(maps.Keys(h.queries))
	h.mu.Unlock()
	switch {
	case !found:
		return nil, api.NotFound(id)
	case !ok:
		return nil, fmt.Errorf("%w: %q handles no query %q; it handles %q", api.ErrUnknownQuery, id, name, names)
	}
	out, err := fn(id, data)
	if err != nil {
		return nil, fmt.Errorf("%w: query %q of %q: %w", api.ErrQueryFailed, name, id, err)
	}
	return out, nil
}

// Fail makes every later call of the method named (such as "Start") return
// err.
func (h *Host) Fail(method string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail[method] = err
}

// failure returns the error Fail set for method, if any.
func (h *Host) failure(method string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fail[method]
}

// SetHistoryWarning sets the length of history past which the instance's
// details warn, as Options.HistoryWarning does for a host.
func (h *Host) SetHistoryWarning(events int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.historyWarning = events
}

func (h *Host) HistoryWarning() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.historyWarning == 0 {
		return api.DefaultHistoryWarning
	}
	return h.historyWarning
}

// SetRefused makes Refused say that the host cannot run the module hash
// (its hash or the first digits of it) for err.
func (h *Host) SetRefused(hash string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refused == nil {
		h.refused = map[string]error{}
	}
	h.refused[hash] = err
}

// Refused returns what SetRefused set for the module hash, or nil.
func (h *Host) Refused(hash string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for prefix, err := range h.refused {
		if strings.HasPrefix(hash, prefix) {
			return err
		}
	}
	return nil
}

// Deployed returns the bytes of every Deploy call so far.
func (h *Host) Deployed() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.deployed)
}

// tick moves the clock on and returns the new time. h.mu must be held.
func (h *Host) tick() time.Time {
	h.now = h.now.Add(time.Second)
	return h.now
}

// Deploy registers every orchestration of the fake under the sha256 of
// wasm, with the environment it had if it was deployed before.
func (h *Host) Deploy(ctx context.Context, wasm []byte) (store.ModuleInfo, error) {
	return h.deploy(wasm, nil, false)
}

// DeployWithEnv is Deploy with the environment env.
func (h *Host) DeployWithEnv(ctx context.Context, wasm []byte, env []string) (store.ModuleInfo, error) {
	return h.deploy(wasm, env, true)
}

func (h *Host) deploy(wasm []byte, env []string, replaceEnv bool) (store.ModuleInfo, error) {
	if err := h.failure("Deploy"); err != nil {
		return store.ModuleInfo{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deployed = append(h.deployed, wasm)
	sum := sha256.Sum256(wasm)
	info := store.ModuleInfo{
		Hash:           hex.EncodeToString(sum[:]),
		Orchestrations: slices.Sorted(maps.Keys(h.orchestrations)),
		Activities:     []string{},
		Env:            env,
		DeployedAt:     h.tick(),
	}
	if i := slices.IndexFunc(h.modules, func(m store.ModuleInfo) bool { return m.Hash == info.Hash }); i >= 0 {
		if !replaceEnv {
			info.Env = h.modules[i].Env
		}
		h.modules = slices.Delete(h.modules, i, i+1)
	}
	h.modules = slices.Insert(h.modules, 0, info)
	return info, nil
}

// RemoveModule removes a module no instance runs on.
func (h *Host) RemoveModule(ctx context.Context, hash string) error {
	if err := h.failure("RemoveModule"); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.IndexFunc(h.modules, func(m store.ModuleInfo) bool { return m.Hash == hash })
	switch {
	case i < 0:
		return fmt.Errorf("%w: %q", api.ErrModuleNotFound, hash)
	case slices.ContainsFunc(h.instances, func(inst store.Instance) bool { return inst.ModuleHash == hash }):
		return fmt.Errorf("%w: instances run on it", api.ErrModuleInUse)
	}
	h.modules = slices.Delete(h.modules, i, i+1)
	return nil
}

// Raise records a raised event; Raised returns them. An instance that has
// finished is refused.
func (h *Host) Raise(ctx context.Context, id, name string, data json.RawMessage, persistent bool) error {
	if err := h.failure("Raise"); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.running(id); err != nil {
		return err
	}
	h.raised = append(h.raised, api.RaiseRequest{Name: name, Data: data, Persistent: persistent})
	return nil
}

// Cancel records a cancellation; Cancelled returns them. An instance that
// has finished is refused.
func (h *Host) Cancel(ctx context.Context, id, reason string) error {
	return h.request("Cancel", id, reason)
}

// Terminate records a termination as Cancel records a cancellation, as
// "terminate ID: reason".
func (h *Host) Terminate(ctx context.Context, id, reason string) error {
	return h.request("Terminate", id, reason)
}

func (h *Host) request(method, id, reason string) error {
	if err := h.failure(method); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.running(id); err != nil {
		return err
	}
	if method == "Terminate" {
		id = "terminate " + id
	}
	h.cancelled = append(h.cancelled, id+": "+reason)
	return nil
}

// running refuses an instance that does not exist or has finished. h.mu
// must be held.
func (h *Host) running(id string) error {
	i, ok := h.find(id)
	switch {
	case !ok:
		return fmt.Errorf("%w: %q", api.ErrNotFound, id)
	case h.instances[i].Status.IsTerminal():
		return fmt.Errorf("%w: %q is %s; nothing more can happen to it", api.ErrFinished, id, h.instances[i].Status)
	}
	return nil
}

// Purge deletes a finished instance and its history.
func (h *Host) Purge(ctx context.Context, id string) error {
	if err := h.failure("Purge"); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.find(id)
	switch {
	case !ok:
		return fmt.Errorf("%w: %q", api.ErrNotFound, id)
	case !h.instances[i].Status.IsTerminal():
		return fmt.Errorf("%w: %q has not ended; cancel or terminate it, or wait for it to end, then purge it", api.ErrNotFinished, id)
	}
	h.instances = slices.Delete(h.instances, i, i+1)
	delete(h.history, id)
	return nil
}

// PurgeMatching purges every finished instance (it does not filter: see
// the package documentation), or counts them with dryRun, and keeps f.
func (h *Host) PurgeMatching(ctx context.Context, f store.InstanceFilter, dryRun bool) (int, error) {
	if err := h.failure("PurgeMatching"); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.filter = f
	n := 0
	for i := len(h.instances) - 1; i >= 0; i-- {
		if inst := h.instances[i]; inst.Status.IsTerminal() {
			n++
			if !dryRun {
				h.instances = slices.Delete(h.instances, i, i+1)
				delete(h.history, inst.ID)
			}
		}
	}
	return n, nil
}

// Cancelled returns every cancellation and termination so far, as "ID:
// reason" and "terminate ID: reason".
func (h *Host) Cancelled() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.cancelled)
}

// Raised returns every event raised so far.
func (h *Host) Raised() []api.RaiseRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.raised)
}

// Start creates a Pending instance on the newest module. An empty id
// becomes "inst" and a number.
func (h *Host) Start(ctx context.Context, name string, input json.RawMessage, id string) (string, error) {
	return h.StartOn(ctx, "", name, input, id)
}

// StartOn is Start on the module whose hash is or starts with module
// (empty: the newest).
func (h *Host) StartOn(ctx context.Context, module, name string, input json.RawMessage, id string) (string, error) {
	if err := h.failure("Start"); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.modules) == 0 || h.orchestrations[name] == nil {
		return "", fmt.Errorf("%w %q: no deployed module registers it", api.ErrUnknownOrchestration, name)
	}
	on := slices.IndexFunc(h.modules, func(m store.ModuleInfo) bool { return strings.HasPrefix(m.Hash, module) })
	if on < 0 {
		return "", fmt.Errorf("%w: no deployed module's hash starts with %q", api.ErrModuleNotFound, module)
	}
	if id == "" {
		id = fmt.Sprintf("inst%d", len(h.instances)+1)
	}
	if _, ok := h.find(id); ok {
		return "", fmt.Errorf("%w: %q", api.ErrInstanceExists, id)
	}
	now := h.tick()
	h.instances = slices.Insert(h.instances, 0, store.Instance{
		ID: id, Name: name, ModuleHash: h.modules[on].Hash, ExecutionID: 1,
		Status: engine.StatusPending, Input: input, CreatedAt: now, UpdatedAt: now,
	})
	h.history[id] = []engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Time: now, Name: name, InstanceID: id, Input: input}}
	return id, nil
}

// StartWithEvent starts instance id as StartOn does and records the event
// ev as Raise does or, when instance id exists, only raises ev at it. It
// reports whether it started the instance.
func (h *Host) StartWithEvent(ctx context.Context, module, name string, input json.RawMessage, id string, ev api.RaiseRequest) (bool, error) {
	h.mu.Lock()
	_, exists := h.find(id)
	h.mu.Unlock()
	if exists {
		return false, h.Raise(ctx, id, ev.Name, ev.Data, ev.Persistent)
	}
	if _, err := h.StartOn(ctx, module, name, input, id); err != nil {
		return false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.raised = append(h.raised, ev)
	return true, nil
}

// find returns the index of instance id. h.mu must be held.
func (h *Host) find(id string) (int, bool) {
	i := slices.IndexFunc(h.instances, func(inst store.Instance) bool { return inst.ID == id })
	return i, i >= 0
}

// Instance returns an instance as it stands.
func (h *Host) Instance(ctx context.Context, id string) (store.Instance, error) {
	if err := h.failure("Instance"); err != nil {
		return store.Instance{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.find(id)
	if !ok {
		return store.Instance{}, fmt.Errorf("%w: %q", api.ErrNotFound, id)
	}
	return h.instances[i], nil
}

// Wait runs the instance's orchestration with ctx, unless the instance is
// terminal already, and returns the instance as it then stands. If the
// orchestration returns ctx's error, so does Wait, as a real host may when
// ctx ends while it reads the store.
func (h *Host) Wait(ctx context.Context, id string) (store.Instance, error) {
	if err := h.failure("Wait"); err != nil {
		return store.Instance{}, err
	}
	inst, err := h.Instance(ctx, id)
	if err != nil || inst.Status.IsTerminal() {
		return inst, err
	}
	result, err := h.orchestrations[inst.Name](ctx, inst.Input)
	if err != nil && errors.Is(err, ctx.Err()) {
		return inst, err
	}
	return h.finish(id, result, err), nil
}

// finish records what an orchestration returned.
func (h *Host) finish(id string, result json.RawMessage, err error) store.Instance {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, _ := h.find(id)
	inst := &h.instances[i]
	inst.UpdatedAt = h.tick()
	event := engine.Event{ID: int64(len(h.history[id]) + 1), Time: inst.UpdatedAt}
	switch {
	case errors.Is(err, ErrStillRunning):
		inst.Status = engine.StatusRunning
		return *inst
	case err != nil:
		inst.Status, inst.Failure = engine.StatusFailed, &engine.Failure{Message: err.Error()}
		event.Kind, event.Failure = engine.OrchestrationFailed, inst.Failure
	default:
		inst.Status, inst.Result = engine.StatusCompleted, result
		event.Kind, event.Result = engine.OrchestrationCompleted, result
	}
	h.history[id] = append(h.history[id], event)
	return *inst
}

// History returns an instance's history.
func (h *Host) ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	if err := h.failure("History"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.find(id); !ok {
		return nil, fmt.Errorf("%w: %q", api.ErrNotFound, id)
	}
	if execution > 1 {
		return nil, fmt.Errorf("%w: %q has no execution %d; its executions are 1 to 1", api.ErrExecutionNotFound, id, execution)
	}
	return slices.Clone(h.history[id]), nil
}

// List returns a page of every instance, newest first (it does not
// filter, but by parent), and keeps q. Its cursors are positions.
func (h *Host) List(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	if err := h.failure("List"); err != nil {
		return store.InstancePage{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.query = q
	from := 0
	if q.After != "" {
		var err error
		if from, err = strconv.Atoi(q.After); err != nil {
			return store.InstancePage{}, fmt.Errorf("%w: bad cursor %q", api.ErrBadInput, q.After)
		}
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	page := store.InstancePage{Instances: []store.InstanceSummary{}}
	if q.Filter.ParentID != "" {
		return page, nil
	}
	for _, inst := range h.instances[min(from, len(h.instances)):] {
		if len(page.Instances) == q.Limit {
			page.Next = strconv.Itoa(from + q.Limit)
			break
		}
		page.Instances = append(page.Instances, inst.Summary())
	}
	return page, nil
}

// ListQuery returns the query List was last given.
func (h *Host) ListQuery() store.InstanceQuery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.query
}

// Filter returns the filter PurgeMatching or Count was last given.
func (h *Host) Filter() store.InstanceFilter {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.filter
}

// Ready is nil, unless Fail("Ready", err) made it err.
func (h *Host) Ready(ctx context.Context) error { return h.failure("Ready") }

// Count counts every instance per module and status (it does not
// filter), and keeps f.
func (h *Host) Count(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	if err := h.failure("Count"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.filter = f
	var counts []store.InstanceCount
	for _, inst := range h.instances {
		i := slices.IndexFunc(counts, func(c store.InstanceCount) bool { return c.ModuleHash == inst.ModuleHash && c.Status == inst.Status })
		if i < 0 {
			i, counts = len(counts), append(counts, store.InstanceCount{ModuleHash: inst.ModuleHash, Status: inst.Status})
		}
		counts[i].Count++
	}
	return counts, nil
}

// Executions describes the instance's one execution.
// Attributes returns the search attributes SetAttributes gave instance
// id.
func (h *Host) Attributes(ctx context.Context, id string) ([]abi.Attribute, error) {
	if err := h.failure("Attributes"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attributes[id], nil
}

// SetAttributes gives instance id the search attributes attrs, which
// Attributes returns.
func (h *Host) SetAttributes(id string, attrs ...abi.Attribute) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attributes[id] = attrs
}

func (h *Host) Executions(ctx context.Context, id string) ([]store.Execution, error) {
	if err := h.failure("Executions"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.find(id); !ok {
		return nil, fmt.Errorf("%w: %q", api.ErrNotFound, id)
	}
	events := h.history[id]
	x := store.Execution{ID: 1, Events: int64(len(events)), StartedAt: events[0].Time}
	if last := events[len(events)-1]; last.IsTerminal() {
		x.EndedAt, x.End = last.Time, last.Kind
	}
	return []store.Execution{x}, nil
}

// SetWaits sets what Waits returns for instance id.
func (h *Host) SetWaits(id string, waits []engine.Wait) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waits[id] = waits
}

// Waits returns what SetWaits set for the instance.
func (h *Host) Waits(ctx context.Context, id string) ([]engine.Wait, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.find(id); !ok {
		return nil, fmt.Errorf("%w: %q", api.ErrNotFound, id)
	}
	return h.waits[id], nil
}

// Now returns the fake host's time, which each change moves on a second.
func (h *Host) Now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// SetQueue sets what Queue returns.
func (h *Host) SetQueue(q store.QueueStats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = q
}

// Queue returns what SetQueue set.
func (h *Host) Queue(ctx context.Context) (store.QueueStats, error) {
	if err := h.failure("Queue"); err != nil {
		return store.QueueStats{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queue, nil
}

// Modules returns the deployed modules, newest first.
func (h *Host) Modules(ctx context.Context) ([]store.ModuleInfo, error) {
	if err := h.failure("Modules"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.modules), nil
}

// Greeting greets its input, a JSON string: "world" gives "Hello, world!".
func Greeting(_ context.Context, input json.RawMessage) (json.RawMessage, error) {
	var name string
	if err := json.Unmarshal(input, &name); err != nil {
		return nil, err
	}
	return json.Marshal("Hello, " + name + "!")
}

// Handler serves h with server.New and opts. It panics if New refuses
// opts: a test's mistake.
func (h *Host) Handler(opts server.Options) http.Handler {
	handler, err := server.New(h, opts)
	if err != nil {
		panic(err)
	}
	return handler
}
