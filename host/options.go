package host

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/option"
	"github.com/durabox/durabox/host/metrics"
)

// DefaultScratchLimit is Options.ScratchLimit's default, 64 MiB
// (RATIONALE.md, "Why 64 MiB of scratch space?").
const DefaultScratchLimit = 64 << 20

// Options configures a Host. The zero value means every default.
type Options struct {
	// Logger receives the host's logs and the guests' output. Nil discards.
	Logger *slog.Logger
	// CacheDir holds compiled modules so a restarted host does not compile
	// them again. Empty means no disk cache.
	CacheDir string
	// Runtime is the WebAssembly runtime that runs the guests: "wazero"
	// (pure Go) or "wasmtime" (Cranelift, through cgo). Empty means wazero.
	// Either replays the other's histories byte for byte
	// (docs/runtimes.md).
	Runtime string
	// OrchestrationWorkers is how many instances run turns at once. Zero
	// means 32: a turn spends much of its time waiting for its commit to
	// reach the disk, and idle workers cost nothing (one fetcher takes the
	// work for all of them, BENCHMARKS.md).
	OrchestrationWorkers int
	// ActivityWorkers is how many activities run at once. Zero means 32:
	// an activity mostly waits (on the network, or on the commit of its
	// result), and the more results arrive together, the more share one
	// commit (BENCHMARKS.md).
	ActivityWorkers int
	// MaxLiveMemory bounds the memory the orchestration instances kept live
	// between turns hold between them, in bytes: the pages of linear
	// memory each one wrote (on wazero the module's snapshot, which it only
	// reads, is shared), what the runtime keeps for it beside them (about
	// 185 KiB on wazero), and its history. Past
	// it the least recently used is dropped and replayed from history when
	// it next runs: a dropped instance replays to exactly the same
	// history, only slower. Zero means a quarter of the memory the host
	// may use: its cgroup's limit when it runs under one (a container),
	// else the machine's memory.
	MaxLiveMemory uint64
	// MaxLiveInstances bounds how many orchestration instances stay live,
	// whatever memory they hold. Zero means a quarter of the memory
	// mappings the system allows a process (vm.max_map_count: 16,382
	// with Linux's default of 65,530), since each live instance maps its
	// memory in up to three pieces and the host needs mappings of its own.
	MaxLiveInstances int
	// NoLiveCache keeps no instance live between turns: every turn replays
	// its instance's history on a fresh guest. For measurements and tests.
	NoLiveCache bool
	// HistoryWarning is the length of an execution's history, in events,
	// past which the host warns: it logs once when a turn takes an
	// instance past it, and GET /v1/instances/{id} (durabox status, the
	// dashboard) carries a warning while the current execution is past it.
	// Nothing is refused: a history may grow without limit, but every cold
	// replay (after an eviction from the live cache, or a restart) reads it
	// whole. Zero means api.DefaultHistoryWarning.
	HistoryWarning int
	// StalledAfter is how long an instance that has not finished may go
	// without a turn that changes it before the metric
	// durabox_instances_stalled counts it. Zero means 15 minutes.
	StalledAfter time.Duration
	// MaxPersistentEvents is how many persistent events one execution of
	// an instance takes (taken and waiting together): a raise past them is
	// refused with ErrTooManyEvents, one an orchestration raises past them
	// is not delivered (its sender is told), and continue-as-new carries
	// the newest that many. Every host sharing a store should set the
	// same. Zero means engine.MaxPersistentEvents, 20, the external-events
	// reference's number.
	MaxPersistentEvents int
	// ActivationTimeout is the wall-clock deadline for one activation of
	// an orchestration (one history event applied), and for each call
	// deploy makes into a module (its initialization, version and
	// manifest). An orchestration that runs longer fails; a module, is
	// refused. It counts time, not work: a machine busy enough can fail a
	// step that passed before, and StepBudget is the bound that fails a
	// step at the same point everywhere. Zero means 5s.
	ActivationTimeout time.Duration
	// StepBudget bounds, in loop iterations, the work of one activation of
	// an orchestration: one that runs more fails, at the same point live, on
	// every replay and on either runtime, because the budget counts work
	// (every loop iteration of the module's code, counted by the loops the
	// sandbox's rewriter instruments, and every 16 bytes a bulk memory
	// instruction copies or fills, as one iteration), not time.
	// ActivationTimeout stays as the backstop, for a module the rewriter
	// does not take. Zero means no budget.
	StepBudget uint64
	// MaxPayload bounds one payload, in bytes: an instance's input, an
	// event's data, a custom status, a result, the input of an activity or
	// a child. Start and Raise refuse a larger one (ErrTooLarge); an
	// orchestration that emits one fails, and an activity that returns one
	// fails its attempt, each saying so. Zero means 16 MiB.
	MaxPayload int
	// ActivityTimeout bounds one activity attempt: one that runs longer
	// fails (the orchestration sees an activity error). Zero means 5m. A
	// call that sets its own deadline (durabox.WithTimeout) has that one
	// instead, shorter or longer. An
	// attempt whose result nobody will take (its instance ended, or the
	// orchestration cancelled the activity) is stopped at once.
	ActivityTimeout time.Duration
	// CancelGrace is how long an activity attempt whose result is no
	// longer wanted has to clean up before the host stops it, when it
	// sends heartbeats (the heartbeat that follows tells it, and the SDK
	// cancels its context): an attempt that sends none cannot be told,
	// and is stopped at once. Zero means 10s.
	CancelGrace time.Duration
	// Lease is how long a locked instance or activity task stays locked
	// before another worker may take it over. Zero means 1m.
	Lease time.Duration
	// ActivityQueues routes activity calls by name to task queues: a call
	// of an activity named here that names no task queue of its own
	// (durabox.OnQueue, the module's DefaultQueue) is given to the workers
	// of the queue it maps to, instead of running in the module. Its
	// history says what the orchestration asked for; the task, where it
	// ran.
	ActivityQueues map[string]string
	// MemoryLimit caps each wasm instance's linear memory, in bytes. Zero
	// means 256 MiB.
	MemoryLimit uint64
	// ScratchLimit is how many bytes the files of an activity attempt's
	// scratch directory (/scratch in its wasm instance, removed when the
	// attempt ends) may hold; a write past it fails with "no space left on
	// device". Zero means 64 MiB.
	ScratchLimit uint64
	// NoScratch gives activities no scratch directory: /scratch does not
	// exist in their instances.
	NoScratch bool
	// ScratchDir is where the host makes the attempts' scratch
	// directories, one for each attempt that uses its own. Empty means
	// os.TempDir() ($TMPDIR, else /tmp).
	ScratchDir string
	// HTTPAllowList lists the hosts activities may reach over HTTP (through
	// the guest SDK's durahttp package): "example.com" for any port,
	// "example.com:8080" for one. Empty means none.
	HTTPAllowList []string
	// Shared says that other hosts use the store too (store/postgres):
	// instances this host waits for may change on them, so Wait looks at
	// the store every second as well as whenever this host changes an
	// instance. The work the other hosts make is announced to this host
	// when the store tells of it (store.Watcher: PostgreSQL's
	// LISTEN/NOTIFY), and found at the next Poll otherwise.
	Shared bool
	// Poll is how often an idle dispatcher looks at the store for work
	// nothing announced: work other hosts made while this host could not
	// listen for it, or on a store that does not tell of it. While the
	// store tells this host of the other hosts' work, it looks every
	// minute (or every Poll, if longer), for what an announcement lost
	// would leave. Zero means a second.
	Poll time.Duration
	// PoisonAfter is how many times one turn or one activity task is
	// delivered before the host gives up on it as poison: work that never
	// finishes because the host crashes, is killed or loses the lease every
	// time it runs it. A poison turn fails its instance; a poison activity
	// fails (the orchestration sees an activity error and decides, as for
	// any other). Zero means 8.
	PoisonAfter int
	// Retention is how long the host keeps what has ended: an instance
	// that finished (Completed, Failed, Canceled, Terminated) is purged
	// Retention after it finished, the history of an execution that
	// continued as new is deleted Retention after it ended, a batch
	// (StartBatch) that completed or was stopped Retention after it
	// ended, and a record of the audit log Retention after it was made.
	// Zero keeps everything.
	Retention time.Duration
	// SweepInterval is how often the host applies Retention. Zero means a
	// tenth of Retention, between a minute and an hour.
	SweepInterval time.Duration
	// SchedulePoll is how long, at most, the scheduler waits before it
	// reads the schedules again, for what it was not told of: schedules
	// another host changed, and a run that ended while a slot waited for
	// it (overlap buffer-one). Zero means 1s.
	SchedulePoll time.Duration
	// BatchPoll is how long, at most, the batch runner waits before it
	// looks again at the batches (durabox batch): for the batches other
	// hosts started or gave up, and for the next instance a batch's rate
	// allows. Zero means 1 second.
	BatchPoll time.Duration
	// BatchLease is how long a batch stays with the host that runs it
	// after each instance it takes: a batch whose host died goes on, on
	// another host, that long after. Zero means 30 seconds.
	BatchLease time.Duration
	// Clock returns the current time. Nil means time.Now.
	Clock func() time.Time
	// TraceExporter, when not nil, receives the host's OpenTelemetry spans
	// (docs/tracing.md), through a batch span processor, as service
	// durabox: each turn, activity attempt, update, query and schedule
	// firing, in the trace of its instance. Close exports what is left
	// and shuts it down. Nil means no tracing, at no cost.
	TraceExporter sdktrace.SpanExporter
	// Metrics receive what the host does, and are served by its handler at
	// GET /metrics; make them with metrics.New before the store, so that
	// the store reports its commits to them too. Nil means metrics of the
	// host's own, which show no commits. Metrics serve one host.
	Metrics *metrics.Metrics
}

func (o *Options) validate() error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := option.Fill([]option.Field[int]{
		{Name: "OrchestrationWorkers", Value: &o.OrchestrationWorkers, Default: 32},
		{Name: "ActivityWorkers", Value: &o.ActivityWorkers, Default: 32},
		{Name: "MaxLiveInstances", Value: &o.MaxLiveInstances, Default: defaultLiveInstances()},
		{Name: "PoisonAfter", Value: &o.PoisonAfter, Default: 8},
		{Name: "MaxPayload", Value: &o.MaxPayload, Default: api.DefaultMaxPayload},
		{Name: "HistoryWarning", Value: &o.HistoryWarning, Default: api.DefaultHistoryWarning},
		{Name: "MaxPersistentEvents", Value: &o.MaxPersistentEvents, Default: engine.MaxPersistentEvents},
	}); err != nil {
		return err
	}
	if err := option.Fill([]option.Field[time.Duration]{
		{Name: "ActivationTimeout", Value: &o.ActivationTimeout, Default: 5 * time.Second},
		{Name: "ActivityTimeout", Value: &o.ActivityTimeout, Default: 5 * time.Minute},
		{Name: "Lease", Value: &o.Lease, Default: time.Minute},
		{Name: "CancelGrace", Value: &o.CancelGrace, Default: 10 * time.Second},
		{Name: "Retention", Value: &o.Retention, Default: 0},
		{Name: "SchedulePoll", Value: &o.SchedulePoll, Default: time.Second},
		{Name: "Poll", Value: &o.Poll, Default: time.Second},
		{Name: "BatchPoll", Value: &o.BatchPoll, Default: time.Second},
		{Name: "BatchLease", Value: &o.BatchLease, Default: 30 * time.Second},
		{Name: "StalledAfter", Value: &o.StalledAfter, Default: 15 * time.Minute},
		{Name: "SweepInterval", Value: &o.SweepInterval, Default: min(max(o.Retention/10, time.Minute), time.Hour)},
	}); err != nil {
		return err
	}
	switch {
	case o.NoLiveCache:
		o.MaxLiveInstances, o.MaxLiveMemory = 0, 0
	case o.MaxLiveMemory == 0:
		o.MaxLiveMemory = defaultLiveMemory()
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = 256 << 20
	}
	if o.ScratchLimit == 0 {
		o.ScratchLimit = DefaultScratchLimit
	}
	if o.ScratchLimit > math.MaxInt64 {
		return fmt.Errorf("host: the scratch limit is %d bytes; it must be at most %d", o.ScratchLimit, int64(math.MaxInt64))
	}
	switch o.Runtime {
	case "":
		o.Runtime = RuntimeWazero
	case RuntimeWazero, RuntimeWasmtime:
	default:
		return fmt.Errorf("host: the runtime is %q; it must be %q or %q", o.Runtime, RuntimeWazero, RuntimeWasmtime)
	}
	if o.MemoryLimit < 16<<20 {
		return fmt.Errorf("host: the memory limit is %d MiB; a Go guest needs at least 16 MiB", o.MemoryLimit>>20)
	}
	for _, h := range o.HTTPAllowList {
		if u, err := url.Parse("http://" + h + "/"); h == "" || err != nil || u.Host != h {
			return fmt.Errorf("host: HTTPAllowList has %q, which is not a host name (example.com) or a host:port (example.com:8080); leave out the scheme and the path", h)
		}
	}
	for name, queue := range o.ActivityQueues {
		if err := abi.CheckName("activity name", name); err != nil {
			return fmt.Errorf("host: ActivityQueues: %w", err)
		}
		if err := abi.CheckTaskQueue(queue); err != nil {
			return fmt.Errorf("host: ActivityQueues maps activity %q: %w", name, err)
		}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	return nil
}
