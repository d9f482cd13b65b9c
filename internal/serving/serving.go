// Package serving is how durabox serve configures what it runs: its
// logger, its host's options, its store's and its HTTP server's, from its
// command line. The benchmark (internal/bench) builds its hosts with the
// same functions, from serve's defaults, so that no option serve sets
// and the benchmark leaves off can hide a cost from it: in issue 35 the
// reply to a wait through the HTTP API read an instance's whole history,
// which the benchmark, waiting in-process, never did.
package serving

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

// Config is durabox serve's command line as the host takes it; the zero
// value is serve's defaults but for Logger, which the zero value of
// serve's flags makes with Logger.
type Config struct {
	Runtime                      string
	StepBudget                   uint64
	AllowHTTP                    []string
	StepTimeout, ActivityTimeout time.Duration
	// MemoryMiB and CacheMiB are in MiB.
	MemoryMiB, CacheMiB      uint64
	HistoryWarning           int
	MaxPersistentEvents      int
	Retention, SweepInterval time.Duration
	MaxPayloadMiB            int
	CacheDir                 string
	Lease                    time.Duration
	Shared                   bool
	Logger                   *slog.Logger
	// ActivityQueues is --activity-queue: task queues by activity name.
	ActivityQueues map[string]string
	// CancelGrace is --cancel-grace.
	CancelGrace time.Duration
	// ScratchMiB is --scratch-mib, in MiB; NoScratch is set when it is
	// 0, which gives activities no scratch directory.
	ScratchMiB uint64
	NoScratch  bool
	// StalledAfter is --stalled-after.
	StalledAfter time.Duration
}

// Logger returns the logger of serve's --log-format (json, or text) and
// --log-level, writing to w.
func Logger(w io.Writer, json bool, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if json {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Host returns the host's options, with metrics of its own for the store
// and the server to report to (SQLite, Postgres, Server).
func (c Config) Host() host.Options {
	return host.Options{Runtime: c.Runtime, StepBudget: c.StepBudget, HTTPAllowList: c.AllowHTTP, ActivationTimeout: c.StepTimeout,
		ActivityTimeout: c.ActivityTimeout, MemoryLimit: c.MemoryMiB << 20, MaxLiveMemory: c.CacheMiB << 20,
		HistoryWarning: c.HistoryWarning, MaxPersistentEvents: c.MaxPersistentEvents, Retention: c.Retention, SweepInterval: c.SweepInterval, MaxPayload: c.MaxPayloadMiB << 20,
		Logger: c.Logger, CacheDir: c.CacheDir, Metrics: metrics.New(), Lease: c.Lease, Shared: c.Shared, ActivityQueues: c.ActivityQueues, CancelGrace: c.CancelGrace,
		ScratchLimit: c.ScratchMiB << 20, NoScratch: c.NoScratch,
		StalledAfter: c.StalledAfter}
}

// SQLite returns the options of the SQLite store of a host with opts, at
// durability d: it logs to the host's logger and reports its commits to
// the host's metrics, then to also, when not nil.
func SQLite(opts host.Options, d sqlite.Durability, also func(store.CommitStats)) sqlite.Options {
	return sqlite.Options{Durability: d, Logger: opts.Logger, OnCommit: observe(opts, also)}
}

// Postgres returns the options of the PostgreSQL store of a host with
// opts, as hostID among the hosts sharing the database; its commits are
// reported as SQLite's are.
func Postgres(opts host.Options, hostID string, also func(store.CommitStats)) postgres.Options {
	return postgres.Options{HostID: hostID, Logger: opts.Logger, OnCommit: observe(opts, also)}
}

// observe reports a commit to the metrics of opts, then to also.
func observe(opts host.Options, also func(store.CommitStats)) func(store.CommitStats) {
	if also == nil {
		return opts.Metrics.ObserveCommit
	}
	return func(s store.CommitStats) {
		opts.Metrics.ObserveCommit(s)
		also(s)
	}
}

// Server returns the options of h's HTTP server, as serve gives them
// before it adds the tokens: it answers requests for hosts.
func (c Config) Server(h *host.Host, hosts []string) server.Options {
	return server.Options{Logger: c.Logger, MaxPayload: c.MaxPayloadMiB << 20, Hosts: hosts, Metrics: h.Metrics(), Version: Version()}
}

// Version is what durabox version prints and GET /v1/version answers:
// host.BuildVersion, with the schema versions of both stores.
func Version() api.Version {
	v := host.BuildVersion()
	v.Schemas = map[string]int{"sqlite": sqlite.SchemaVersion, "postgres": postgres.SchemaVersion}
	return v
}

// CheckOTLPEndpoint refuses an --otlp-endpoint that is not an http or
// https URL with a host; empty is no tracing.
func CheckOTLPEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not the base URL of an OTLP/HTTP collector; give one such as http://127.0.0.1:4318", endpoint)
	}
	return nil
}

// TraceExporter returns the exporter of spans over OTLP/HTTP to the
// collector at endpoint, a base URL to which /v1/traces is added (as
// OpenTelemetry's $OTEL_EXPORTER_OTLP_ENDPOINT is read). Its other
// settings come from OpenTelemetry's variables ($OTEL_EXPORTER_OTLP_HEADERS,
// …). It connects to nothing until it exports.
func TraceExporter(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
	if err := CheckOTLPEndpoint(endpoint); err != nil {
		return nil, errors.New("--otlp-endpoint: " + err.Error())
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	return exp, nil
}
