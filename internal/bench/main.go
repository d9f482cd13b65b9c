// Command bench is Durabox's benchmark suite (make bench). It runs real
// workloads through a real host on real SQLite files (with --postgres, the
// hello and sequential figures through several hosts on one PostgreSQL
// database: make bench-pg) and prints every figure
// on a line of its own, "BENCH <name> <value> <unit>", so that runs can be
// compared by a script; lines starting with # describe the run.
//
// Every figure is measured in the same run as the raw SQLite commit rate on
// the same disk at the same durability, because absolute figures drift on
// shared machines; the *_per_commit figures relate the two.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// config is what one run measures, from the flags.
type config struct {
	dir        string
	durability sqlite.Durability
	hello      int
	sequential int
	// workerSteps is the length of the workers' sequential figure.
	workerSteps int
	fanOut      int
	// backlog are the sizes of the backlog figures, smallest first.
	backlog       []int
	replay        int
	idle          int
	waiting, wake int
	cacheMiB      uint64
	payloadMiB    int
	queryCalls    int
	updates       int
	queries       int
	// scheduleFor is how long the schedule figure lets its schedules fire.
	scheduleFor     time.Duration
	workers         int
	activityWorkers int
	only            string
	memProfile      string
	// runtime is the WebAssembly runtime the figures are taken on, one of
	// runtimes.
	runtime  string
	runtimes []string
	// otherShare scales the counts of the heavy figures on runtimes other
	// than wazero.
	otherShare  float64
	helloModule []byte
	benchModule []byte
	// postgres, when set, is the server the hello and sequential figures
	// run on, with hosts hosts sharing a schema of its own.
	postgres string
	hosts    int
}

func main() {
	var c config
	durability := flag.String("durability", "full", "full or normal: the store's durability, and the raw commit loop's")
	flag.IntVar(&c.hello, "hello", 10000, "how many Greeting instances the hello throughput runs")
	flag.IntVar(&c.sequential, "sequential", 100000, "how many activities the sequential instance calls: its history is the long history")
	flag.IntVar(&c.fanOut, "fanout", 1000, "how many activities the fan-out starts at once")
	flag.IntVar(&c.workerSteps, "worker-steps", 500, "how many activities the sequential orchestration of the workers' figure calls")
	backlogSizes := flag.String("backlog", "1000", "the sizes of one instance's backlog of activities, children (up to 10,000) and raised events the backlog figures take, separated by commas, smallest first (make bench-backlog: 1000,10000,100000)")
	flag.IntVar(&c.replay, "replay-events", 10000, "about how many events the cold replay's history has")
	flag.IntVar(&c.idle, "idle", 200, "how many idle instances the memory figure averages over")
	flag.IntVar(&c.waiting, "waiting", 100000, "how many instances wait for an event in the many-waiting figures (make bench-scale: 1,000,000)")
	flag.IntVar(&c.wake, "wake", 10000, "how many of the waiting instances, chosen at random, get their event (make bench-scale: 100,000)")
	flag.Uint64Var(&c.cacheMiB, "cache-mib", 64, "the live cache's bound in the many-waiting figures, in MiB")
	flag.IntVar(&c.payloadMiB, "payload-mib", 10, "the size of the payload figures' input and activity result, in MiB")
	flag.IntVar(&c.queryCalls, "query-calls", 1000, "how many activities the queried instance calls before it waits: its history is twice as long")
	flag.IntVar(&c.queries, "queries", 200, "how many queries each query figure takes the median of")
	flag.IntVar(&c.updates, "updates", 400, "how many updates each update figure sends: to one instance one after another, then over 64 instances at once")
	flag.DurationVar(&c.scheduleFor, "schedule-for", 20*time.Second, "how long the schedule figure's schedules fire, one slot a second each, under the hellos' load")
	flag.IntVar(&c.workers, "workers", 0, "orchestration workers (0: the host's default)")
	flag.IntVar(&c.activityWorkers, "activity-workers", 0, "activity workers (0: the host's default)")
	flag.Float64Var(&c.otherShare, "other-share", 0.1, "the share of the hello, sequential, waiting and wake-up counts the figures of runtimes other than wazero take")
	runtimes := flag.String("runtimes", host.RuntimeWazero+","+host.RuntimeWasmtime, "the WebAssembly runtimes to take the figures on, in order, separated by commas")
	only := flag.String("only", "", "run only the named figure's step (hello, sequential, fanout, backlog, replay, restart, memory, waiting, payload, cpu, query, update, workers, schedule), on each runtime")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to `FILE`")
	flag.StringVar(&c.memProfile, "memprofile", "", "write a heap profile to `FILE` while the idle instances sit in the cache")
	flag.StringVar(&c.postgres, "postgres", "", "run the hello and sequential figures on PostgreSQL at `URL`, or \"auto\" (the server the tests find), instead of SQLite")
	flag.IntVar(&c.hosts, "hosts", 1, "with --postgres, how many hosts share the database (in this process)")
	flag.Parse()
	c.only = *only
	for _, size := range strings.Split(*backlogSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(size))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: --backlog is %q; it must be sizes of 1 or more separated by commas, such as 1000,10000\n", *backlogSizes)
			os.Exit(2)
		}
		c.backlog = append(c.backlog, n)
	}
	c.runtimes = strings.Split(*runtimes, ",")
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: CPU profile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var ok bool
	if c.durability, ok = map[string]sqlite.Durability{"full": sqlite.DurabilityFull, "normal": sqlite.DurabilityNormal}[*durability]; !ok {
		fmt.Fprintf(os.Stderr, "bench: --durability is %q; it must be full or normal\n", *durability)
		os.Exit(2)
	}
	if c.postgres != "" {
		err := runPostgres(&c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	measure := run
	if c.postgres != "" {
		measure = runPostgres
	}
	if err := measure(&c); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(c *config) error {
	dir, err := os.MkdirTemp("", "durabox-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	defer guestbuild.Cleanup()
	c.dir = dir
	hostname, _ := os.Hostname()
	fmt.Printf("# %s, %s/%s, %d CPUs, %s, durability %s, databases in %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), hostname, c.durability, dir)
	if c.helloModule, err = guestbuild.Wasm("examples/wasm/hello"); err != nil {
		return err
	}
	if c.benchModule, err = guestbuild.Wasm("internal/bench/guest"); err != nil {
		return err
	}
	commits, err := commitRate(filepath.Join(dir, "raw.db"), c.durability)
	if err != nil {
		return fmt.Errorf("raw commit rate: %w", err)
	}
	report("sqlite_commit_rate", commits, "commits/s")
	// Every figure is taken on wazero, then on wasmtime, whose names start
	// with "wasmtime_" (--runtimes chooses).
	full := *c
	for _, rt := range c.runtimes {
		*c = full
		c.runtime, prefix = rt, ""
		if rt != host.RuntimeWazero {
			prefix = rt + "_"
			// Every wasmtime instance runs the Go runtime's start (RATIONALE),
			// so its figures that start thousands of instances are taken on
			// a share of them.
			for _, n := range []*int{&c.hello, &c.sequential, &c.waiting, &c.wake} {
				*n = max(int(float64(*n)*c.otherShare), 1)
			}
		}
		for _, step := range []struct {
			name string
			run  func(*config, float64) error
		}{
			{"hello", helloThroughput},
			{"sequential", sequential},
			{"fanout", fanOut},
			{"backlog", backlog},
			{"replay", coldReplay},
			{"restart", restart},
			{"memory", idleMemory},
			{"waiting", waiting},
			{"payload", payload},
			{"cpu", cpuHeavyStep},
			{"query", queries},
			{"update", updates},
			{"workers", workers},
			{"schedule", scheduleDelays},
		} {
			if c.only != "" && c.only != step.name {
				continue
			}
			if err := step.run(c, commits); err != nil {
				return fmt.Errorf("%s on %s: %w", step.name, rt, err)
			}
		}
	}
	return nil
}

// prefix starts the name of every figure taken on a runtime other than
// wazero.
var prefix string

// report prints one figure.
func report(name string, value float64, unit string) {
	name = prefix + name
	switch {
	case value >= 100:
		fmt.Printf("BENCH %s %.0f %s\n", name, value, unit)
	case value >= 1:
		fmt.Printf("BENCH %s %.2f %s\n", name, value, unit)
	default:
		fmt.Printf("BENCH %s %.4f %s\n", name, value, unit)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// us is d in microseconds.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// bench is a host running on its own SQLite file in the run's directory,
// configured as durabox serve configures it, and serving its HTTP API on
// loopback as serve does.
type bench struct {
	st   *sqlite.Store
	h    *host.Host
	stop context.CancelFunc
	done chan error
	// srv serves the host's API on loopback, to c.
	srv *http.Server
	c   *client.Client
	// writes and transactions count what the store committed.
	writes, transactions atomic.Int64
}

// newBench starts a host on dir/name.db, configured by cfg and with the
// compile cache beside the file, as durabox serve --db dir/name.db starts
// it (serving.Config's zero value is serve's defaults: cfg changes only
// the flags a figure needs), then changed by unlike, what a figure
// measures on purpose that serve cannot be told (a host with no live
// cache); serves its API on loopback; and deploys module.
func newBench(c *config, name string, module []byte, cfg serving.Config, unlike ...func(*host.Options)) (*bench, error) {
	path := filepath.Join(c.dir, c.runtime+"-"+name+".db")
	b := &bench{done: make(chan error, 1)}
	cfg.CacheDir, cfg.Runtime = path+".wasmcache", c.runtime
	// serve's default logger: text, at info, to stderr.
	cfg.Logger = serving.Logger(os.Stderr, false, slog.LevelInfo)
	opts := cfg.Host()
	st, err := sqlite.Open(path, serving.SQLite(opts, c.durability, func(s store.CommitStats) {
		b.writes.Add(int64(s.Writes))
		b.transactions.Add(1)
	}))
	if err != nil {
		return nil, err
	}
	c.workersOn(&opts)
	for _, change := range unlike {
		change(&opts)
	}
	h, err := host.New(st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		var handler http.Handler
		if handler, err = server.New(h, cfg.Server(h, []string{ln.Addr().String()})); err != nil {
			ln.Close()
		} else {
			b.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
			go b.srv.Serve(ln)
			b.c = client.New("http://"+ln.Addr().String(), nil)
		}
	}
	if err != nil {
		h.Close()
		st.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	b.st, b.h, b.stop = st, h, stop
	go func() { b.done <- h.Run(ctx) }()
	if _, err := b.c.Deploy(ctx, module); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// workersOn sets the workers of --workers and --activity-workers, the
// benchmark's own flags, on opts: unless they are given, a host has its
// defaults, as under durabox serve.
func (c *config) workersOn(opts *host.Options) {
	if c.workers > 0 {
		opts.OrchestrationWorkers = c.workers
	}
	if c.activityWorkers > 0 {
		opts.ActivityWorkers = c.activityWorkers
	}
}

func (b *bench) close() error {
	b.stop()
	return errors.Join(b.srv.Close(), <-b.done, b.h.Close(), b.st.Close())
}

// runOne starts an instance and waits for it to complete with want,
// through the HTTP API as a client of durabox serve does, and returns the
// time from the start's request to the wait's answer.
func (b *bench) runOne(name, id string, input, want any) (time.Duration, error) {
	ctx := context.Background()
	in, _ := json.Marshal(input)
	began := time.Now()
	if _, err := b.c.Start(ctx, api.StartRequest{Name: name, Input: in, ID: id}); err != nil {
		return 0, err
	}
	inst, err := b.c.Wait(ctx, id)
	if err != nil {
		return 0, err
	}
	return time.Since(began), check(inst.ID, inst.Status, inst.Result, want)
}
