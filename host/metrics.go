package host

import (
	"context"
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

// Metrics are a host's Prometheus metrics, which its handler serves at GET
// /metrics. docs/operator.md lists them with what they mean (a test holds
// its table to the names defined here). The host counts
// what it does; the store, which knows nothing of Prometheus, reports its
// commits to ObserveCommit (store/sqlite's Options.OnCommit), and the
// queue and the live cache are read when the metrics are gathered.
//
// Each host needs Metrics of its own: NewMetrics before the store opens,
// so that the store can report to them, then Options.Metrics.
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
	sandboxStarts   *prometheus.CounterVec
	panics          *prometheus.CounterVec
}

// NewMetrics returns metrics for one host, with the Go runtime's and the
// process's beside them.
func NewMetrics() *Metrics {
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
			Name: "durabox_activities_total", Help: "Activity attempts recorded, by activity and outcome (completed, failed).",
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
		commitFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "durabox_store_commit_failures_total", Help: "Store transactions that failed as a whole.",
		}),
		sandboxStarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_sandbox_instances_started_total", Help: "Wasm instances started, by kind (orchestration, activity).",
		}, []string{"kind"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "durabox_panics_total", Help: "Panics of the host's own code it recovered, by boundary (turn, activity, lease, fetch, module, sweep, upgrade, http, metrics): each ended what was served there, and nothing else.",
		}, []string{"boundary"}),
	}
	m.reg.MustRegister(m.turns, m.turnSeconds, m.started, m.finished, m.activities, m.activitySeconds,
		m.cacheHits, m.cacheMisses, m.commitSeconds, m.commitWrites, m.commitFailures, m.sandboxStarts, m.panics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
}

// turn records a committed turn of an instance of orchestration, and its
// end if it ended the instance.
func (m *Metrics) turn(orchestration string, d time.Duration, status engine.Status) {
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

// activity records an activity attempt's outcome (the kind of the event
// that reports it); a zero d (an attempt given up on, never run) records
// no duration.
func (m *Metrics) activity(name string, kind engine.EventKind, d time.Duration) {
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

// Gather gathers the host's metrics, for GET /metrics.
func (h *Host) Gather() ([]*dto.MetricFamily, error) { return h.metrics.reg.Gather() }

// register adds to m what is read from h when the metrics are gathered:
// the queue and the live cache.
func (m *Metrics) register(h *Host) error {
	err := m.reg.Register(hostCollector{h})
	if errors.As(err, &prometheus.AlreadyRegisteredError{}) {
		return errors.New("host: Options.Metrics are another host's already; give each host its own (NewMetrics)")
	}
	if err != nil {
		return fmt.Errorf("host: metrics: %w", err)
	}
	return nil
}

// hostCollector reads a host's queue and live cache when the metrics are
// gathered.
type hostCollector struct{ h *Host }

// queueTimeout bounds the store's reading of the queue for a scrape.
const queueTimeout = 5 * time.Second

var (
	liveInstancesDesc = prometheus.NewDesc("durabox_live_instances", "Orchestration instances live in memory between turns.", nil, nil)
	liveMemoryDesc    = prometheus.NewDesc("durabox_live_memory_bytes", "Memory the live instances hold: the pages of wasm linear memory each wrote, what the runtime keeps for each, and their histories.", nil, nil)
	liveLimitDesc     = prometheus.NewDesc("durabox_live_memory_limit_bytes", "The bound on durabox_live_memory_bytes (serve --cache-mib): past it the least recently used instances are dropped, to be replayed when they next run.", nil, nil)
	queueDescs        = map[string]*prometheus.Desc{
		"ready":             prometheus.NewDesc("durabox_queue_ready_messages", "Messages ready for a turn (starts, raised events, results, timers come due).", nil, nil),
		"readyInstances":    prometheus.NewDesc("durabox_queue_ready_instances", "Instances with messages ready for a turn.", nil, nil),
		"timers":            prometheus.NewDesc("durabox_queue_timers", "Timers not yet due, of instances that have not finished.", nil, nil),
		"running":           prometheus.NewDesc("durabox_queue_running_instances", "Instances running a turn.", nil, nil),
		"activities":        prometheus.NewDesc("durabox_queue_activities_waiting", "Activity tasks waiting for a worker.", nil, nil),
		"activitiesRunning": prometheus.NewDesc("durabox_queue_activities_running", "Activity tasks running.", nil, nil),
		"oldestReadyAge":    prometheus.NewDesc("durabox_queue_oldest_ready_age_seconds", "How long the ready message that has waited longest has waited (0: none).", nil, nil),
		"oldestActivityAge": prometheus.NewDesc("durabox_queue_oldest_activity_age_seconds", "How long the activity task that has waited longest has waited (0: none).", nil, nil),
	}
)

func (c hostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- liveInstancesDesc
	ch <- liveMemoryDesc
	ch <- liveLimitDesc
	for _, d := range queueDescs {
		ch <- d
	}
}

// Collect sends the gauges of the queue and the live cache. It runs on a
// goroutine of the registry's: a panic is recovered here, and the scrape
// goes without the gauges it did not reach.
func (c hostCollector) Collect(ch chan<- prometheus.Metric) {
	defer c.h.guard.catch(boundaryMetrics, nil)
	mayPanic(pointMetrics, "")
	n, memory := c.h.cache.size()
	ch <- prometheus.MustNewConstMetric(liveInstancesDesc, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(liveMemoryDesc, prometheus.GaugeValue, float64(memory))
	ch <- prometheus.MustNewConstMetric(liveLimitDesc, prometheus.GaugeValue, float64(c.h.cache.maxMemory))
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	q, err := c.h.Queue(ctx)
	if err != nil {
		for _, d := range queueDescs {
			ch <- prometheus.NewInvalidMetric(d, err)
		}
		return
	}
	now := c.h.opts.Clock()
	age := func(w *store.WaitingItem) float64 {
		if w == nil {
			return 0
		}
		return max(now.Sub(w.Since).Seconds(), 0)
	}
	for name, v := range map[string]float64{
		"ready": float64(q.Ready), "readyInstances": float64(q.ReadyInstances), "timers": float64(q.Timers), "running": float64(q.Locked),
		"activities": float64(q.Activities), "activitiesRunning": float64(q.Running),
		"oldestReadyAge": age(q.OldestReady), "oldestActivityAge": age(q.OldestActivity),
	} {
		ch <- prometheus.MustNewConstMetric(queueDescs[name], prometheus.GaugeValue, v)
	}
}
