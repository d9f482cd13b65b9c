package host

import (
	"context"
	"time"

	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/store"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics returns the host's metrics (Options.Metrics, or its own), for
// the server to serve (server.Options.Metrics).
func (h *Host) Metrics() *metrics.Metrics { return h.metrics }

// hostCollector reads a host's queue and live cache when the metrics are
// gathered.
type hostCollector struct{ h *Host }

// queueTimeout bounds the store's reading of the queue for a scrape.
const queueTimeout = 5 * time.Second

var (
	liveInstancesDesc = prometheus.NewDesc("durabox_live_instances", "Orchestration instances live in memory between turns.", nil, nil)
	liveMemoryDesc    = prometheus.NewDesc("durabox_live_memory_bytes", "Memory the live instances hold: the pages of wasm linear memory each wrote, what the runtime keeps for each, and their histories.", nil, nil)
	liveLimitDesc     = prometheus.NewDesc("durabox_live_memory_limit_bytes", "The bound on durabox_live_memory_bytes (serve --cache-mib): past it the least recently used instances are dropped, to be replayed when they next run.", nil, nil)
	taskQueueDesc     = prometheus.NewDesc("durabox_task_queue_tasks", "Activity tasks of each task queue of workers outside the host, waiting for a worker or running.", []string{"queue", "state"}, nil)
	stalledDesc       = prometheus.NewDesc("durabox_instances_stalled", "Instances not finished that no turn has changed for serve --stalled-after (default 15m): waiting on something, such as an activity that keeps failing, an event or a timer (durabox list --stalled-for says which).", nil, nil)
	taskQueuePollDesc = prometheus.NewDesc("durabox_task_queue_last_poll_age_seconds", "How long ago a worker last polled each task queue through this host (a queue none polled since the host started, but with tasks, is absent: alert on its tasks waiting).", []string{"queue"}, nil)
	queueDescs        = map[string]*prometheus.Desc{
		"ready":              prometheus.NewDesc("durabox_queue_ready_messages", "Messages ready for a turn (starts, raised events, results, timers come due).", nil, nil),
		"readyInstances":     prometheus.NewDesc("durabox_queue_ready_instances", "Instances with messages ready for a turn.", nil, nil),
		"timers":             prometheus.NewDesc("durabox_queue_timers", "Timers not yet due, of instances that have not finished.", nil, nil),
		"running":            prometheus.NewDesc("durabox_queue_running_instances", "Instances running a turn.", nil, nil),
		"activities":         prometheus.NewDesc("durabox_queue_activities_waiting", "Activity tasks waiting for a worker.", nil, nil),
		"activitiesRunning":  prometheus.NewDesc("durabox_queue_activities_running", "Activity tasks running.", nil, nil),
		"activitiesRetrying": prometheus.NewDesc("durabox_queue_activities_retrying", "Activity tasks whose attempt failed, waiting for the next attempt their retry policy allows.", nil, nil),
		"oldestReadyAge":     prometheus.NewDesc("durabox_queue_oldest_ready_age_seconds", "How long the ready message that has waited longest has waited (0: none).", nil, nil),
		"oldestActivityAge":  prometheus.NewDesc("durabox_queue_oldest_activity_age_seconds", "How long the activity task that has waited longest has waited (0: none).", nil, nil),
	}
)

func (c hostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- liveInstancesDesc
	ch <- liveMemoryDesc
	ch <- liveLimitDesc
	ch <- taskQueueDesc
	ch <- taskQueuePollDesc
	ch <- stalledDesc
	for _, d := range queueDescs {
		ch <- d
	}
}

// Collect sends the gauges of the queue and the live cache. It runs on a
// goroutine of the registry's: a panic is recovered here, and the scrape
// goes without the gauges it did not reach.
func (c hostCollector) Collect(ch chan<- prometheus.Metric) {
	defer c.h.guard.Catch(guard.Metrics, nil)
	guard.MayPanic(guard.PointMetrics, "")
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
		"activities": float64(q.Activities), "activitiesRunning": float64(q.Running), "activitiesRetrying": float64(q.Retrying),
		"oldestReadyAge": age(q.OldestReady), "oldestActivityAge": age(q.OldestActivity),
	} {
		ch <- prometheus.MustNewConstMetric(queueDescs[name], prometheus.GaugeValue, v)
	}
	for _, t := range q.Queues {
		ch <- prometheus.MustNewConstMetric(taskQueueDesc, prometheus.GaugeValue, float64(t.Waiting), t.Queue, "waiting")
		ch <- prometheus.MustNewConstMetric(taskQueueDesc, prometheus.GaugeValue, float64(t.Running), t.Queue, "running")
	}
	for queue, at := range c.h.queues.lastPolls() {
		ch <- prometheus.MustNewConstMetric(taskQueuePollDesc, prometheus.GaugeValue, max(now.Sub(at).Seconds(), 0), queue)
	}
	ch <- c.stalled(ctx, now)
}

// stalled counts the instances not finished that no turn changed for
// Options.StalledAfter before now: an indexed count (store.InstanceFilter.ProgressedBefore).
func (c hostCollector) stalled(ctx context.Context, now time.Time) prometheus.Metric {
	counts, err := c.h.st.CountInstances(ctx, store.InstanceFilter{ProgressedBefore: now.Add(-c.h.opts.StalledAfter)})
	if err != nil {
		return prometheus.NewInvalidMetric(stalledDesc, err)
	}
	n := 0
	for _, k := range counts {
		n += k.Count
	}
	return prometheus.MustNewConstMetric(stalledDesc, prometheus.GaugeValue, float64(n))
}
