package metrics

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Metrics are a host's Prometheus metrics, which its HTTP server serves at
// GET /metrics. docs/operator.md lists them with what they mean (a test holds
// its table to the names defined here). The host counts
// what it does; the store, which knows nothing of Prometheus, reports its
// commits to ObserveCommit (store/sqlite's Options.OnCommit), and the
// queue and the live cache are read when the metrics are gathered.
//
// Each host needs Metrics of its own: New before the store opens, so that
// the store can report to them, then host.Options.Metrics, and the
// server's Options.Metrics. The host registers what it reads when they
// are gathered (Register).
type Metrics struct {
	reg             *prometheus.Registry
	turns           *prometheus.CounterVec
	turnSeconds     *prometheus.HistogramVec
	started         *prometheus.CounterVec
	finished        *prometheus.CounterVec
	activities      *prometheus.CounterVec
	activitySeconds *prometheus.HistogramVec
	cacheHits       prometheus.Counter
	cacheMisses     prometheus.Counter
	commitSeconds   prometheus.Histogram
	commitWrites    prometheus.Histogram
	commitFailures  prometheus.Counter
	commitsSynced   prometheus.Counter
	sandboxStarts   *prometheus.CounterVec
	panics          *prometheus.CounterVec
	queries         *prometheus.CounterVec
	updates         *prometheus.CounterVec
	scheduleFires   *prometheus.CounterVec
	querySeconds    *prometheus.HistogramVec
}

// New returns metrics for one host, with the Go runtime's and the
// process's beside them.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_turns_total", Help: "Turns committed, by orchestration.",
		}, []string{"orchestration"}),
		turnSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "durabox_turn_duration_seconds",
			Help:    "Time from taking an instance's work to the commit of its turn (a replay, when the instance was not live, included), by orchestration.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5ms to 4s
		}, []string{"orchestration"}),
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_instances_started_total", Help: "Instances created, by orchestration: started through the API, and children started by their parents.",
		}, []string{"orchestration"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_instances_finished_total", Help: "Instances that finished, by orchestration and status (Completed, Failed, Canceled, Terminated).",
		}, []string{"orchestration", "status"}),
		activities: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_activities_total", Help: "Activity attempts that ended, by activity and outcome (completed, failed), those retried by their policy included.",
		}, []string{"activity", "outcome"}),
		activitySeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "durabox_activity_duration_seconds",
			Help:    "Time one activity attempt ran, by activity.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms to 4m22s
		}, []string{"activity"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "durabox_live_cache_hits_total", Help: "Turns of an instance with history that found it live in memory.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "durabox_live_cache_misses_total", Help: "Turns of an instance with history that replayed it on a fresh wasm instance.",
		}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "durabox_store_commit_duration_seconds",
			Help:    "Time one store transaction took, from its start to its commit on disk.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14), // 0.1ms to 0.8s
		}),
		commitWrites: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "durabox_store_commit_writes",
			Help:    "Writes (turns, starts, raises, activity results, leases) one store transaction held: the group commit's batch size.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10), // 1 to 512
		}),
		commitsSynced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "durabox_store_synced_commits_total", Help: "Store transactions that waited for the disk (SQLite) or the server's WAL flush (PostgreSQL); the others held only leases, activity results or audit records.",
		}),
		commitFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "durabox_store_commit_failures_total", Help: "Store transactions that failed as a whole.",
		}),
		sandboxStarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_sandbox_instances_started_total", Help: "Wasm instances started, by kind (orchestration, activity).",
		}, []string{"kind"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_panics_total", Help: "Panics of the host's own code it recovered, by boundary (turn, activity, lease, fetch, module, sweep, upgrade, http, metrics): each ended what was served there, and nothing else.",
		}, []string{"boundary"}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_queries_total", Help: "Queries of instances, by outcome (answered, failed, unknown, refused, crashed) and by how they were answered (live, replayed, none).",
		}, []string{"outcome", "from"}),
		scheduleFires: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_schedule_fires_total", Help: "Slots of schedules this host decided, by schedule and outcome: started (its run started), skipped (its last run was running), buffered (held back until its last run ends), existed (its run's instance id was taken: it had fired), missed (it came too late, outside the catch-up window), triggered (a run started by hand).",
		}, []string{"schedule", "outcome"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_updates_total", Help: "Updates of instances, by what became of them: accepted (in history, its handler runs), completed or failed (the handler answered), refused (by the orchestration: no trace in history).",
		}, []string{"outcome"}),
		querySeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "durabox_query_duration_seconds",
			Help:    "Queries of instances, from the request to the answer, by how they were answered (live, replayed).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10), // 0.1ms to 26s
		}, []string{"from"}),
	}
	m.reg.MustRegister(m.turns, m.turnSeconds, m.started, m.finished, m.activities, m.activitySeconds,
		m.cacheHits, m.cacheMisses, m.commitSeconds, m.commitWrites, m.commitsSynced, m.commitFailures, m.sandboxStarts, m.panics,
		m.queries, m.updates, m.scheduleFires, m.querySeconds, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCommit records a store transaction. Give it to the store (for
// store/sqlite, Options.OnCommit).
func (m *Metrics) ObserveCommit(c store.CommitStats) {
	if c.Err != nil {
		m.commitFailures.Inc()
		return
	}
	m.commitSeconds.Observe(c.Duration.Seconds())
	m.commitWrites.Observe(float64(c.Writes))
	if !c.Unsynced {
		m.commitsSynced.Inc()
	}
}

// Turn records a committed turn of an instance of orchestration, and its
// end if it ended the instance.
func (m *Metrics) Turn(orchestration string, d time.Duration, status engine.Status) {
	orchestration = label(orchestration)
	m.turns.WithLabelValues(orchestration).Inc()
	m.turnSeconds.WithLabelValues(orchestration).Observe(d.Seconds())
	if status.IsTerminal() {
		m.finished.WithLabelValues(orchestration, string(status)).Inc()
	}
}

// label returns name as a label's value: as it is, or, if it is not valid
// UTF-8 (a name stored by an older host, which did not refuse such
// names), with each run of invalid bytes replaced by U+FFFD, because
// Prometheus's client panics on a label value that is not UTF-8.
func label(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	return strings.ToValidUTF8(name, "\uFFFD")
}

// Panic counts a panic of the host's own code recovered at boundary.
func (m *Metrics) Panic(boundary string) { m.panics.WithLabelValues(boundary).Inc() }

// Started counts an instance of orchestration created.
func (m *Metrics) Started(orchestration string) {
	m.started.WithLabelValues(label(orchestration)).Inc()
}

// Failed counts an instance of orchestration the host failed itself,
// without a turn of the engine's (poison, a corrupt history).
func (m *Metrics) Failed(orchestration string) {
	m.finished.WithLabelValues(label(orchestration), string(engine.StatusFailed)).Inc()
}

// CacheHit counts a turn of an instance with history that found it live,
// CacheMiss one that replayed it.
func (m *Metrics) CacheHit()  { m.cacheHits.Inc() }
func (m *Metrics) CacheMiss() { m.cacheMisses.Inc() }

// Update counts what became of an update: accepted, completed, failed or
// refused.
func (m *Metrics) Update(outcome string) { m.updates.WithLabelValues(outcome).Inc() }

// ScheduleFires counts n slots of a schedule decided with outcome (the
// Help of durabox_schedule_fires_total lists them).
func (m *Metrics) ScheduleFires(schedule, outcome string, n int64) {
	m.scheduleFires.WithLabelValues(schedule, outcome).Add(float64(n))
}

// Query counts a query and how it ended: outcome is answered, failed (its
// handler's error, or a handler that tried to change the instance),
// unknown (the instance handles no query of its name), refused (the
// instance cannot be queried: its module predates queries, it has not
// begun, its history does not replay) or crashed (the guest trapped or
// ran past its deadline); from is live, replayed or none (it never reached
// a guest). d is observed for those that reached one.
func (m *Metrics) Query(outcome, from string, d time.Duration) {
	m.queries.WithLabelValues(outcome, from).Inc()
	if from != "none" {
		m.querySeconds.WithLabelValues(from).Observe(d.Seconds())
	}
}

// SandboxStarted counts a wasm instance started, of kind orchestration or
// activity.
func (m *Metrics) SandboxStarted(kind string) { m.sandboxStarts.WithLabelValues(kind).Inc() }

// Gather gathers the metrics, for GET /metrics.
func (m *Metrics) Gather() ([]*dto.MetricFamily, error) { return m.reg.Gather() }

// Register adds c to what Gather reads: a host registers the gauges it
// reads when the metrics are gathered (its queue and its live cache). It
// refuses metrics another host registered with already.
func (m *Metrics) Register(c prometheus.Collector) error {
	err := m.reg.Register(c)
	if errors.As(err, &prometheus.AlreadyRegisteredError{}) {
		return errors.New("host: Options.Metrics are another host's already; give each host its own (metrics.New)")
	}
	if err != nil {
		return fmt.Errorf("host: metrics: %w", err)
	}
	return nil
}

// Activity records an activity attempt's outcome (the kind of the event
// that reports it); a zero d (an attempt given up on, never run) records
// no duration.
func (m *Metrics) Activity(name string, kind engine.EventKind, d time.Duration) {
	outcome := "completed"
	if kind == engine.ActivityFailed {
		outcome = "failed"
	}
	name = label(name)
	m.activities.WithLabelValues(name, outcome).Inc()
	if d > 0 {
		m.activitySeconds.WithLabelValues(name).Observe(d.Seconds())
	}
}
