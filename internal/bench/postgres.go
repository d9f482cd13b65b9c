package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/postgres"
)

// runPostgres measures the hello throughput and the sequential instance
// with c.hosts hosts sharing a PostgreSQL database, each host with its
// own store (its own connections) and compile cache, as durabox serve
// --db postgres://… runs them; and where the time of a turn goes: the
// transactions a completed orchestration costs, and their mean duration.
func runPostgres(c *config) error {
	if c.hosts < 1 {
		return fmt.Errorf("--hosts is %d; it must be 1 or more", c.hosts)
	}
	dir, err := os.MkdirTemp("", "durabox-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	defer guestbuild.Cleanup()
	c.dir = dir
	base, how := c.postgres, "--postgres"
	if base == "auto" {
		if base, how, err = pgtest.Find(); err != nil {
			return err
		}
		defer pgtest.Stop()
	}
	name, _ := os.Hostname()
	fmt.Printf("# %s, %s/%s, %d CPUs, %s, PostgreSQL from %s, %d hosts\n",
		time.Now().UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), name, how, c.hosts)
	if c.helloModule, err = guestbuild.Wasm("examples/wasm/hello"); err != nil {
		return err
	}
	if c.benchModule, err = guestbuild.Wasm("internal/bench/guest"); err != nil {
		return err
	}
	rate, err := pgCommitRate(base)
	if err != nil {
		return fmt.Errorf("raw commit rate: %w", err)
	}
	report("pg_commit_rate", rate, "commits/s")
	for _, step := range []struct {
		name string
		run  func(*config, string) error
	}{{"hello", pgHello}, {"sequential", pgSequential}} {
		if c.only != "" && c.only != step.name {
			continue
		}
		if err := step.run(c, base); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	return nil
}

// pgCommitRate measures the server's limit for one client: single-row
// INSERTs, each its own transaction, for two seconds, in a schema of its
// own.
func pgCommitRate(base string) (float64, error) {
	url, drop, err := pgtest.NewSchema(base)
	if err != nil {
		return 0, err
	}
	defer drop()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE t (id bigserial PRIMARY KEY, v bytea)`); err != nil {
		return 0, err
	}
	payload := make([]byte, 200)
	n, start := 0, time.Now()
	for time.Since(start) < 2*time.Second {
		if _, err := conn.Exec(ctx, `INSERT INTO t (v) VALUES ($1)`, payload); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// fleet is c.hosts hosts on one fresh schema.
type fleet struct {
	hosts  []*host.Host
	stores []store.Store
	stop   context.CancelFunc
	done   chan error
	drop   func() error
	// commits and busy count the transactions of every store and their
	// time.
	commits, busy atomic.Int64
}

func newFleet(c *config, base, name string, module []byte) (*fleet, error) {
	url, drop, err := pgtest.NewSchema(base)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	f := &fleet{stop: stop, done: make(chan error, c.hosts), drop: drop}
	for i := range c.hosts {
		// As durabox serve --db postgres://… configures a host (see
		// newBench), but for the workers' flags of the benchmark's own.
		opts := serving.Config{Shared: true, CacheDir: filepath.Join(c.dir, name, fmt.Sprint(i)),
			Logger: serving.Logger(os.Stderr, false, slog.LevelInfo)}.Host()
		c.workersOn(&opts)
		st, err := postgres.Open(url, serving.Postgres(opts, fmt.Sprintf("bench-%d", i), func(s store.CommitStats) {
			f.commits.Add(1)
			f.busy.Add(int64(s.Duration))
		}))
		if err != nil {
			f.close()
			return nil, err
		}
		f.stores = append(f.stores, st)
		h, err := host.New(st, opts)
		if err != nil {
			f.close()
			return nil, err
		}
		f.hosts = append(f.hosts, h)
		go func() { f.done <- h.Run(ctx) }()
	}
	for _, h := range f.hosts {
		// Each host compiles the module before the clock starts.
		if _, err := h.Deploy(ctx, module); err != nil {
			f.close()
			return nil, err
		}
	}
	return f, nil
}

func (f *fleet) close() error {
	f.stop()
	var errs []error
	for range f.hosts {
		errs = append(errs, <-f.done)
	}
	for _, h := range f.hosts {
		errs = append(errs, h.Close())
	}
	for _, s := range f.stores {
		errs = append(errs, s.Close())
	}
	return errors.Join(append(errs, f.drop())...)
}

// pgHello starts c.hello Greeting instances at once, spread over the
// hosts by 16 clients, and waits for all.
func pgHello(c *config, base string) error {
	f, err := newFleet(c, base, "hello", c.helloModule)
	if err != nil {
		return err
	}
	defer f.close()
	f.commits.Store(0)
	f.busy.Store(0)
	start := time.Now()
	latencies, last, err := hellos(c.hello, f.hosts)
	if err != nil {
		return err
	}
	// The last instance finished when its UpdatedAt says, not when the
	// waiting host's poll saw it.
	elapsed := last.Sub(start)
	prefix := fmt.Sprintf("pg%d_", c.hosts)
	report(prefix+"hello_throughput", float64(c.hello)/elapsed.Seconds(), "orch/s")
	report(prefix+"hello_loaded_latency_p50", ms(latencies[len(latencies)/2]), "ms")
	report(prefix+"hello_transactions_per_orch", float64(f.commits.Load())/float64(c.hello), "tx/orch")
	report(prefix+"hello_transaction_mean", ms(time.Duration(f.busy.Load()/max(f.commits.Load(), 1))), "ms")
	return nil
}

// pgSequential runs one instance calling c.sequential activities one after
// another.
func pgSequential(c *config, base string) error {
	f, err := newFleet(c, base, "sequential", c.benchModule)
	if err != nil {
		return err
	}
	defer f.close()
	ctx := context.Background()
	n := c.sequential
	in, _ := json.Marshal(n)
	if _, err := f.hosts[0].Start(ctx, "Sequential", in, "sequential"); err != nil {
		return err
	}
	inst, err := f.hosts[0].Wait(ctx, "sequential")
	if err != nil {
		return err
	}
	if err := check(inst.ID, inst.Status, inst.Result, n*(n-1)/2); err != nil {
		return err
	}
	total := inst.UpdatedAt.Sub(inst.CreatedAt)
	prefix := fmt.Sprintf("pg%d_", c.hosts)
	report(prefix+"sequential_per_activity", ms(total)/float64(n), "ms")
	return nil
}
