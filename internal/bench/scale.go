package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/procmem"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store"
)

// clients is how many goroutines start or raise at once, as many clients
// of a host would.
const clients = 16

// wokenAlone is how many more waiting instances the waiting step wakes one
// at a time, once the others are done.
const wokenAlone = 200

// waiting starts c.waiting Idle instances, each of which waits for an
// event, in one SQLite file, with the live cache bounded at c.cacheMiB;
// then raises the event to c.wake of them chosen at random, most of them
// no longer cached, all at once, and waits for each to complete; then
// wakes 200 more one at a time. It reports the start rate, the database's
// size per instance, the wake-up rate, the latency from a raise to its
// instance's completion (under the backlog, and alone), and
// the process's peak memory beside the cache's bound.
func waiting(c *config, commits float64) error {
	b, err := newBench(c, "waiting", c.benchModule, serving.Config{CacheMiB: c.cacheMiB})
	if err != nil {
		return err
	}
	defer b.close()
	peak := sampleMemory()
	defer peak.stop()
	ctx := context.Background()
	id := func(i int) string { return fmt.Sprint("waiting-", i) }

	start := time.Now()
	if err := each(c.waiting, func(i int) error {
		_, err := b.h.Start(ctx, "Idle", nil, id(i))
		return err
	}); err != nil {
		return err
	}
	// Started means waiting for the event: the first turn has run.
	for {
		counts, err := b.h.Count(ctx, store.InstanceFilter{Statuses: []engine.Status{engine.StatusRunning}})
		if err != nil {
			return err
		}
		var n int
		for _, k := range counts {
			n += k.Count
		}
		if n == c.waiting {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	started := time.Since(start)
	size, err := dbSize(filepath.Join(c.dir, c.runtime+"-waiting.db"))
	if err != nil {
		return err
	}
	fmt.Printf("# %d instances waiting for an event, the live cache bounded at %d MiB\n", c.waiting, c.cacheMiB)
	report("waiting_start_rate", float64(c.waiting)/started.Seconds(), "instances/s")
	report("waiting_start_per_commit", float64(c.waiting)/started.Seconds()/commits, "instances/commit")
	report("waiting_db_per_instance", float64(size)/float64(c.waiting), "bytes")

	missesBefore, err := counter(b.h.Metrics(), "durabox_live_cache_misses_total")
	if err != nil {
		return err
	}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(c.waiting)
	chosen, alone := perm[:c.wake], perm[c.wake:min(c.wake+wokenAlone, c.waiting)]
	raised := make([]time.Time, c.wake)
	start, cpu := time.Now(), cpuTime()
	if err := each(c.wake, func(i int) error {
		raised[i] = time.Now()
		return b.h.Raise(ctx, id(chosen[i]), "Wake", json.RawMessage(`"up"`), false)
	}); err != nil {
		return err
	}
	latencies := make([]time.Duration, c.wake)
	for i, k := range chosen {
		inst, err := b.h.Wait(ctx, id(k))
		if err != nil {
			return err
		}
		if err := check(inst.ID, inst.Status, inst.Result, "up"); err != nil {
			return err
		}
		latencies[i] = inst.UpdatedAt.Sub(raised[i])
	}
	woken, spent := time.Since(start), cpuTime()-cpu
	missesAfter, err := counter(b.h.Metrics(), "durabox_live_cache_misses_total")
	if err != nil {
		return err
	}
	slices.Sort(latencies)
	report("wake_rate", float64(c.wake)/woken.Seconds(), "wake-ups/s")
	report("wake_per_commit", float64(c.wake)/woken.Seconds()/commits, "wake-ups/commit")
	report("wake_cpu_per_wake", us(spent)/float64(c.wake), "us")
	report("wake_uncached", (missesAfter-missesBefore)/float64(c.wake), "fraction")
	report("wake_latency_p50", ms(latencies[len(latencies)/2]), "ms")
	report("wake_latency_p99", ms(latencies[len(latencies)*99/100]), "ms")
	// One at a time, on the idle host: the latency without a backlog.
	latencies = latencies[:0]
	for _, k := range alone {
		raisedAt := time.Now()
		if err := b.h.Raise(ctx, id(k), "Wake", json.RawMessage(`"up"`), false); err != nil {
			return err
		}
		inst, err := b.h.Wait(ctx, id(k))
		if err != nil {
			return err
		}
		if err := check(inst.ID, inst.Status, inst.Result, "up"); err != nil {
			return err
		}
		latencies = append(latencies, inst.UpdatedAt.Sub(raisedAt))
	}
	if len(latencies) > 0 {
		slices.Sort(latencies)
		report("wake_alone_latency_p50", ms(latencies[len(latencies)/2]), "ms")
		report("wake_alone_latency_p99", ms(latencies[len(latencies)*99/100]), "ms")
	}
	pss, rss := peak.stop()
	report("waiting_cache_bound", float64(c.cacheMiB), "MiB")
	report("waiting_peak_pss", float64(pss)/(1<<20), "MiB")
	report("waiting_peak_rss", float64(rss)/(1<<20), "MiB")
	report("waiting_peak_go_memory", float64(peak.goPeak)/(1<<20), "MiB")
	return nil
}

// each calls f(i) for every i below n, from clients goroutines at once,
// and returns the first error.
func each(n int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// dbSize returns the size of a SQLite file with its WAL.
func dbSize(path string) (int64, error) {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil && !os.IsNotExist(err) {
			return 0, err
		}
		if err == nil {
			n += fi.Size()
		}
	}
	return n, nil
}

// counter returns the value of a counter with no labels.
func counter(g prometheus.Gatherer, name string) (float64, error) {
	families, err := g.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue(), nil
		}
	}
	return 0, fmt.Errorf("no metric %s", name)
}

// peakSampler records the process's peak proportional and resident set
// sizes, sampled every second: a read of /proc/self/smaps_rollup walks the
// page tables of every mapping, about 9 ms of the kernel's time once the
// cache holds thousands of instances, and sampled every 200 ms it took a
// tenth of the CPU of the wake-up figure it was measuring.
type peakSampler struct {
	done     chan struct{}
	finished chan procmem.Memory
	once     sync.Once
	peak     procmem.Memory
	// goPeak is the peak of what the Go runtime held from the system
	// and had not released: its heap, stacks and own data, without the
	// wasm memories, compiled code and SQLite's caches outside it.
	goPeak int64
}

// goMemory is what the Go runtime holds from the system and has not
// released, in bytes.
func goMemory() int64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(samples)
	return int64(samples[0].Value.Uint64() - samples[1].Value.Uint64())
}

func sampleMemory() *peakSampler {
	p := &peakSampler{done: make(chan struct{}), finished: make(chan procmem.Memory, 1)}
	go func() {
		var peak procmem.Memory
		var goPeak int64
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if m, err := procmem.Read(); err == nil {
				peak.PSS, peak.RSS = max(peak.PSS, m.PSS), max(peak.RSS, m.RSS)
			}
			goPeak = max(goPeak, goMemory())
			select {
			case <-p.done:
				p.goPeak = goPeak
				p.finished <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// stop stops the sampling, once, and returns the peaks.
func (p *peakSampler) stop() (pss, rss int64) {
	p.once.Do(func() {
		close(p.done)
		p.peak = <-p.finished
	})
	return p.peak.PSS, p.peak.RSS
}

// payload runs one Payload instance with an input of c.payloadMiB MiB,
// whose activity returns as much: the time from start to completion, and
// the growth of the process's peak resident memory.
func payload(c *config, _ float64) error {
	b, err := newBench(c, "payload", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	if _, err := b.runOne("Payload", "warm-up", "x", [2]int{1, 1}); err != nil {
		return err
	}
	n := c.payloadMiB << 20
	before, err := resetPeakRSS()
	if err != nil {
		return err
	}
	took, err := b.runOne("Payload", "payload", strings.Repeat("i", n), [2]int{n, n})
	if err != nil {
		return err
	}
	after, err := peakRSS()
	if err != nil {
		return err
	}
	fmt.Printf("# a %d MiB input and a %d MiB activity result\n", c.payloadMiB, c.payloadMiB)
	report("payload_time", ms(took), "ms")
	report("payload_peak_memory", float64(after-before)/(1<<20), "MiB")
	return nil
}

// resetPeakRSS resets the process's peak resident set size to its
// current one (Linux's clear_refs), and returns it.
func resetPeakRSS() (int64, error) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset the peak resident memory: %w (the payload figure needs Linux)", err)
	}
	return peakRSS()
}

// peakRSS returns the process's peak resident set size (VmHWM).
func peakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kib int64
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kib); err == nil {
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
