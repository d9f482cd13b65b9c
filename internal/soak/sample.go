package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is the host as it stood at one moment, At after the load began.
// Sizes are in bytes.
type sample struct {
	At               time.Duration
	PSS, RSS         float64
	Threads          float64
	Heap             float64
	Live, LiveMemory float64
	Timers, Ready    float64
	DB, WAL, Log     float64
	Goroutines       float64
	// Greetings counts the Greeting instances finished, HeartbeatTurns
	// the turns of Heartbeat instances.
	Greetings, HeartbeatTurns float64
}

// take samples p: its memory and threads from /proc, the rest from its
// /metrics and its files.
func take(p *serveProc, at time.Duration) (sample, error) {
	s := sample{At: at}
	rollup, err := procFields(fmt.Sprintf("/proc/%d/smaps_rollup", p.pid()))
	if err != nil {
		return s, err
	}
	status, err := procFields(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return s, err
	}
	s.PSS, s.RSS, s.Threads = rollup["Pss"]*1024, rollup["Rss"]*1024, status["Threads"]
	m, err := scrape("http://" + p.addr + "/metrics")
	if err != nil {
		return s, err
	}
	s.Heap = m.value("go_memstats_heap_inuse_bytes", "")
	s.Goroutines = m.value("go_goroutines", "")
	s.Live, s.LiveMemory = m.value("durabox_live_instances", ""), m.value("durabox_live_memory_bytes", "")
	s.Timers, s.Ready = m.value("durabox_queue_timers", ""), m.value("durabox_queue_ready_messages", "")
	s.HeartbeatTurns = m.value("durabox_turns_total", "Heartbeat")
	s.Greetings = m.value("durabox_instances_finished_total", "Greeting")
	s.DB, s.WAL, s.Log = fileSize(p.db), fileSize(p.db+"-wal"), fileSize(p.log)
	return s, nil
}

// procFields reads the "Name: value ..." lines of a /proc file, each
// line's first number.
func procFields(path string) (map[string]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fields := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if f := strings.Fields(rest); ok && len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				fields[name] = v
			}
		}
	}
	return fields, nil
}

// fileSize is a file's size, 0 when it is not there.
func fileSize(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size())
}

// metrics are the families of one scrape.
type metrics map[string]*dto.MetricFamily

func scrape(url string) (metrics, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return families, nil
}

// value sums the gauges or counters of a family, those whose
// orchestration label is orchestration when it is set.
func (m metrics) value(name, orchestration string) float64 {
	f, ok := m[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, metric := range f.Metric {
		if orchestration != "" && !hasLabel(metric, "orchestration", orchestration) {
			continue
		}
		switch {
		case metric.Gauge != nil:
			sum += metric.Gauge.GetValue()
		case metric.Counter != nil:
			sum += metric.Counter.GetValue()
		case metric.Untyped != nil:
			sum += metric.Untyped.GetValue()
		}
	}
	return sum
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
