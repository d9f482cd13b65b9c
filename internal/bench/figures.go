package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/procmem"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store/sqlite"
)

// check fails unless an instance completed with want.
func check(id string, status engine.Status, result json.RawMessage, want any) error {
	w, _ := json.Marshal(want)
	if status != engine.StatusCompleted || string(result) != string(w) {
		return fmt.Errorf("instance %s ended %s with %s, want Completed with %s", id, status, result, w)
	}
	return nil
}

// commitRate measures the disk's limit: single-row INSERTs, each its own
// transaction, in WAL mode at durability d, for two seconds.
func commitRate(path string, d sqlite.Durability) (float64, error) {
	mode := map[sqlite.Durability]string{sqlite.DurabilityFull: "FULL", sqlite.DurabilityNormal: "NORMAL"}[d]
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_sync="+mode)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`); err != nil {
		return 0, err
	}
	payload := make([]byte, 200)
	n, start := 0, time.Now()
	for time.Since(start) < 2*time.Second {
		if _, err := db.Exec(`INSERT INTO t (v) VALUES (?)`, payload); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// helloThroughput starts c.hello Greeting instances at once (16 clients
// starting them) and waits for all: completed orchestrations per second,
// and the spread of start-to-completion latency under that load. Then, on
// the idle host, the latency of one instance at a time.
func helloThroughput(c *config, commits float64) error {
	b, err := newBench(c, "hello", c.helloModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	if _, err := b.runOne("Greeting", "warm-up", "world", "Hello, world!"); err != nil {
		return err
	}
	start, cpu := time.Now(), cpuTime()
	writes, transactions := b.writes.Load(), b.transactions.Load()
	latencies, _, err := hellos(c.hello, []*host.Host{b.h})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	rate := float64(c.hello) / elapsed.Seconds()
	report("hello_throughput", rate, "orch/s")
	// What each orchestration cost the machine's CPUs (the process's user
	// and system time, the clients starting and waiting included): with
	// two CPUs, the throughput can be no more than 2 s over it.
	report("hello_cpu_per_orch", us(cpuTime()-cpu)/float64(c.hello), "us")
	report("hello_per_commit", rate/commits, "orch/commit")
	// What each orchestration asked of the one writer: its writes, and
	// the transactions (each a sync at full) they shared.
	report("hello_writes_per_orch", float64(b.writes.Load()-writes)/float64(c.hello), "writes/orch")
	report("hello_transactions_per_orch", float64(b.transactions.Load()-transactions)/float64(c.hello), "tx/orch")
	report("hello_loaded_latency_p50", ms(latencies[len(latencies)/2]), "ms")
	report("hello_loaded_latency_p99", ms(latencies[len(latencies)*99/100]), "ms")
	latencies = latencies[:0]
	for i := range 200 {
		d, err := b.runOne("Greeting", fmt.Sprint("alone-", i), "world", "Hello, world!")
		if err != nil {
			return err
		}
		latencies = append(latencies, d)
	}
	slices.Sort(latencies)
	report("hello_latency_p50", ms(latencies[len(latencies)/2]), "ms")
	report("hello_latency_p99", ms(latencies[len(latencies)*99/100]), "ms")
	return nil
}

// hellos starts n Greeting instances at once, 16 clients starting them on
// hosts in turn, waits for all on the first host, and returns their
// start-to-completion latencies, sorted, and when the last one completed.
func hellos(n int, hosts []*host.Host) ([]time.Duration, time.Time, error) {
	ctx := context.Background()
	const clients = 16
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for k := range clients {
		wg.Go(func() {
			for i := k; i < n; i += clients {
				if _, err := hosts[i%len(hosts)].Start(ctx, "Greeting", json.RawMessage(`"world"`), fmt.Sprint("hello-", i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, time.Time{}, err
	}
	latencies := make([]time.Duration, n)
	var last time.Time
	for i := range n {
		inst, err := hosts[0].Wait(ctx, fmt.Sprint("hello-", i))
		if err != nil {
			return nil, last, err
		}
		if err := check(inst.ID, inst.Status, inst.Result, "Hello, world!"); err != nil {
			return nil, last, err
		}
		latencies[i] = inst.UpdatedAt.Sub(inst.CreatedAt)
		if inst.UpdatedAt.After(last) {
			last = inst.UpdatedAt
		}
	}
	slices.Sort(latencies)
	return latencies, last, nil
}

// sequential runs one instance calling c.sequential activities one after
// another, which makes a long history, and compares the cost of a round (a
// turn, an activity, their commits) near the start with one near the end,
// from the times the history records; then it replays that history cold,
// on a fresh wasm instance (the median of three), and reports the cost per
// event, from which a shorter run scales.
func sequential(c *config, commits float64) error {
	b, err := newBench(c, "sequential", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	n := c.sequential
	cpu := cpuTime()
	total, err := b.runOne("Sequential", "sequential", n, n*(n-1)/2)
	if err != nil {
		return err
	}
	spent := cpuTime() - cpu
	history, err := b.h.History(context.Background(), "sequential")
	if err != nil {
		return err
	}
	var scheduled []time.Time
	for _, e := range history {
		if e.Kind == engine.ActivityScheduled {
			scheduled = append(scheduled, e.Time)
		}
	}
	if len(scheduled) != n {
		return fmt.Errorf("the history has %d ActivityScheduled events, want %d", len(scheduled), n)
	}
	// round is the mean time between 100 consecutive schedules from i.
	round := func(i int) time.Duration { return scheduled[i+100].Sub(scheduled[i]) / 100 }
	early, late := round(min(100, n-101)), round(n-101)
	report("sequential_total", total.Seconds(), "s")
	report("sequential_per_activity", ms(total)/float64(n), "ms")
	report("sequential_cpu_per_activity", us(spent)/float64(n), "us")
	report("sequential_activities_per_commit", float64(n)/total.Seconds()/commits, "activities/commit")
	report("sequential_round_early", ms(early), "ms")
	report("sequential_round_late", ms(late), "ms")
	report("sequential_turn_ratio", float64(late)/float64(early), "x")
	cold, err := medianReplay(b, "sequential", 3)
	if err != nil {
		return err
	}
	report("sequential_history", float64(len(history)), "events")
	report("sequential_cold_replay", ms(cold), "ms")
	report("sequential_cold_replay_per_event", float64(cold.Nanoseconds())/1e3/float64(len(history)), "us")
	return nil
}

// fanOut runs five instances, one after another, each starting
// c.fanOut activities at once and joining them, and reports the median
// time, the median CPU time the process spent on one (a figure a loaded
// machine inflates less than the time) and the median count of commits.
func fanOut(c *config, _ float64) error {
	b, err := newBench(c, "fanout", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	const runs = 5
	n := c.fanOut
	var times, cpus []time.Duration
	var commits []int64
	for i := range runs {
		cpu, tx := cpuTime(), b.transactions.Load()
		total, err := b.runOne("FanOut", fmt.Sprint("fanout-", i), n, n*(n-1)/2)
		if err != nil {
			return err
		}
		times, cpus, commits = append(times, total), append(cpus, cpuTime()-cpu), append(commits, b.transactions.Load()-tx)
	}
	slices.Sort(times)
	slices.Sort(cpus)
	slices.Sort(commits)
	report("fanout_total", times[runs/2].Seconds(), "s")
	report("fanout_cpu_per_activity", us(cpus[runs/2])/float64(n), "us")
	report("fanout_commits", float64(commits[runs/2]), "commits")
	return nil
}

// coldReplay replays, on a fresh wasm instance, the history of a
// Sequential instance of about c.replay events (the median of five), and
// of an instance of one step: the instance start.
func coldReplay(c *config, _ float64) error {
	b, err := newBench(c, "replay", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	n := c.replay / 2
	if _, err := b.runOne("Sequential", "replayed", n, n*(n-1)/2); err != nil {
		return err
	}
	history, err := b.h.History(context.Background(), "replayed")
	if err != nil {
		return err
	}
	cold, err := medianReplay(b, "replayed", 5)
	if err != nil {
		return err
	}
	fmt.Printf("# cold replay of %d events\n", len(history))
	report("cold_replay", ms(cold), "ms")
	report("cold_replay_per_event", float64(cold.Microseconds())/float64(len(history)), "us")
	// An instance that completed at once (Sequential of none): its replay
	// is an instance start and one step.
	if _, err := b.runOne("Sequential", "empty", 0, 0); err != nil {
		return err
	}
	start, err := medianReplay(b, "empty", 21)
	if err != nil {
		return err
	}
	report("instance_start", float64(start.Microseconds()), "us")
	return nil
}

// medianReplay replays instance id n times, and returns the median time.
func medianReplay(b *bench, id string, n int) (time.Duration, error) {
	var times []time.Duration
	for range n {
		start := time.Now()
		rep, err := b.h.Replay(context.Background(), id, api.ReplayRequest{})
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			return 0, err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[n/2], nil
}

// idleMemory starts c.idle instances that wait for an event, so that they
// sit in the cache, and divides the growth of the process's memory by their
// number: its proportional set size (what the instances cost the machine:
// a page of the module's snapshot, which every instance maps and only
// reads, counts once, shared among them), and its resident set size,
// which counts such a page once for every instance that maps it.
func idleMemory(c *config, _ float64) error {
	b, err := newBench(c, "idle", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	ctx := context.Background()
	if err := startIdle(b, "warm-up", 1); err != nil {
		return err
	}
	before, err := procmem.Settled()
	if err != nil {
		return err
	}
	if err := startIdle(b, "idle", c.idle); err != nil {
		return err
	}
	after, err := procmem.Settled()
	if err != nil {
		return err
	}
	if c.memProfile != "" {
		if err := writeHeapProfile(c.memProfile); err != nil {
			return err
		}
	}
	report("idle_instance_memory", float64(after.PSS-before.PSS)/float64(c.idle)/(1<<20), "MiB")
	report("idle_instance_rss", float64(after.RSS-before.RSS)/float64(c.idle)/(1<<20), "MiB")
	for i := range c.idle {
		if err := b.h.Raise(ctx, fmt.Sprint("idle-", i), "Wake", json.RawMessage(`"up"`), false); err != nil {
			return err
		}
	}
	for i := range c.idle {
		inst, err := b.h.Wait(ctx, fmt.Sprint("idle-", i))
		if err != nil {
			return err
		}
		if err := check(inst.ID, inst.Status, inst.Result, "up"); err != nil {
			return err
		}
	}
	return nil
}

// startIdle starts n Idle instances and waits until each has run its
// first turn (and so sits in the cache).
func startIdle(b *bench, prefix string, n int) error {
	ctx := context.Background()
	for i := range n {
		if _, err := b.h.Start(ctx, "Idle", nil, fmt.Sprint(prefix, "-", i)); err != nil {
			return err
		}
	}
	for i := range n {
		for {
			inst, err := b.h.Instance(ctx, fmt.Sprint(prefix, "-", i))
			if err != nil {
				return err
			}
			if inst.Status == engine.StatusRunning {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	// The instance goes into the cache just after its turn commits.
	time.Sleep(100 * time.Millisecond)
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}

// cpuHeavyStep runs a step of 100 million loop iterations of arithmetic
// (Crunch) in a fresh instance, and reports the time from its start to its
// completion, as its client sees it (the median of five): mostly the speed
// of the runtime's compiled code.
func cpuHeavyStep(c *config, _ float64) error {
	b, err := newBench(c, "cpu", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	const n = 100_000_000
	var times []time.Duration
	for i := range 5 {
		start := time.Now()
		if _, err := b.runOne("Crunch", fmt.Sprint("crunch-", i), n, true); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	report("cpu_heavy_step_100M", ms(times[2]), "ms")
	return nil
}

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
