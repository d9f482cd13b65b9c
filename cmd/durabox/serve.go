package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/store/sqlite"
)

var serveCommand = &command{
	name:     "serve",
	synopsis: "--db FILE [--addr ADDR] [--allow-http HOSTS] [flags]",
	summary:  "run a host on a SQLite file",
	about: "Run a host that keeps everything in the SQLite file FILE (created if missing)\n" +
		"and serves its HTTP API at ADDR, until SIGINT or SIGTERM. Compiled modules are\n" +
		"cached in the directory FILE.wasmcache, so a restart does not compile them again.\n" +
		"Once it listens, it prints \"durabox: serving on http://ADDR (db FILE)\" to\n" +
		"stderr; its logs follow.",
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		db := fs.String("db", "", "the SQLite `FILE` (required)")
		addr := fs.String("addr", defaultAddr, "listen on `ADDR`, as host:port; port 0 picks a free port (default "+defaultAddr+")")
		stepTimeout := fs.Duration("step-timeout", 0, "the CPU deadline `D` for one step of an orchestration, such as 5s; an orchestration that runs longer (an endless loop) fails (default 5s)")
		memoryMiB := fs.Uint64("memory-mib", 0, "the memory limit of each wasm instance, in MiB (`N`); an instance that needs more fails (default 256)")
		allowHTTP := fs.String("allow-http", "", "the `HOSTS` activities may reach over HTTP, comma-separated: example.com for any port, example.com:8080 for one (default none)")
		durability := fs.String("durability", "full", "the durability `MODE`: full (the default) syncs every commit to disk; normal may lose the last commits if the machine loses power, never if the host crashes")
		return func(ctx context.Context, e *env) error {
			if *db == "" {
				return usagef("--db FILE is required")
			}
			d, ok := durabilities[*durability]
			if !ok {
				return usagef("--durability is %q; it must be full or normal", *durability)
			}
			var hosts []string
			for _, h := range strings.Split(*allowHTTP, ",") {
				if h = strings.TrimSpace(h); h != "" {
					hosts = append(hosts, h)
				}
			}
			opts := host.Options{HTTPAllowList: hosts, ActivationTimeout: *stepTimeout, MemoryLimit: *memoryMiB << 20}
			return serve(ctx, e, *db, *addr, d, opts)
		}
	},
}

var durabilities = map[string]sqlite.Durability{"full": sqlite.DurabilityFull, "normal": sqlite.DurabilityNormal}

// shutdownTimeout bounds how long serve waits for requests in flight once
// it is told to stop.
const shutdownTimeout = 10 * time.Second

func serve(ctx context.Context, e *env, db, addr string, durability sqlite.Durability, opts host.Options) (err error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))

	st, err := sqlite.Open(db, sqlite.Options{Durability: durability, Logger: logger})
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	defer func() {
		if closeErr := st.Close(); closeErr != nil {
			err = errors.Join(err, fmt.Errorf("durabox: serve: close the store: %w", closeErr))
		}
	}()
	opts.Logger, opts.CacheDir = logger, db+".wasmcache"
	h, err := host.New(st, opts)
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	defer func() {
		if closeErr := h.Close(); closeErr != nil {
			err = errors.Join(err, fmt.Errorf("durabox: serve: close the host: %w", closeErr))
		}
	}()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}

	// Stop everything when told to, or when the host or the server stops
	// by itself (which only a failure makes them do).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{
		Handler:           host.NewHandler(h, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// Requests end with ctx, so that long polls do not hold up Shutdown.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	hostDone := make(chan error, 1)
	go func() {
		err := h.Run(ctx)
		cancel()
		hostDone <- err
	}()
	serverDone := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		cancel()
		serverDone <- err
	}()
	fmt.Fprintf(e.stderr, "durabox: serving on http://%s (db %s)\n", ln.Addr(), db)

	<-ctx.Done()
	logger.Info("stopping")
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancelShutdown()
	errs := []error{srv.Shutdown(shutdownCtx), <-hostDone}
	if err := <-serverDone; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	return nil
}
