package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

var serveCommand = &command{
	name:     "serve",
	synopsis: "--db FILE|URL [--addr ADDR] [--token-file FILE] [flags]",
	summary:  "run a host on a SQLite file, or one of several on PostgreSQL",
	about: "Run a host that keeps everything in the SQLite file FILE (created if missing,\n" +
		"readable by its owner only) and serves its HTTP API at ADDR, until SIGINT or\n" +
		"SIGTERM. Compiled modules are cached in the directory FILE.wasmcache, so a\n" +
		"restart does not compile them again. Once it listens, it prints \"durabox:\n" +
		"serving on http://ADDR (db FILE)\" to stderr; its logs follow. With\n" +
		"--log-format json every line is a JSON object, from the first,\n" +
		"{\"msg\":\"serving\",\"url\":\"http://ADDR\",\"db\":\"FILE\",…}, to a failure,\n" +
		"{\"level\":\"ERROR\",\"msg\":\"serve failed\",\"err\":…}.\n\n" +
		"With a PostgreSQL URL (postgres://user@host:5432/database) instead of FILE,\n" +
		"any number of hosts share the database: each takes work with leases, a host\n" +
		"that dies has its work taken over once its leases end (--lease), and a\n" +
		"client may talk to any of them. Each needs its own --host-id; compiled\n" +
		"modules are cached in --cache-dir (default: the user's cache directory,\n" +
		"durabox/HOST-ID).\n\n" +
		"On loopback (127.0.0.1, the default) anyone on the machine may use the API.\n" +
		"Beyond it, a token is required: every request must carry one (durabox sends\n" +
		"$DURABOX_TOKEN or --token-file), and serve refuses to start without one. Each\n" +
		"token has a name and a role (--token NAME=SECRET[:ROLE], or one a line in\n" +
		"--token-file): an admin token may do everything, a read token only read, a\n" +
		"worker's token only serve tasks. Every change made through the API, and each\n" +
		"one refused for its token's role, is recorded with the token's name in the\n" +
		"audit log (durabox audit), and in the history of the instance it changes. With\n" +
		"--tls-cert and --tls-key it serves https; without, tokens travel in clear.\n\n" +
		"Whatever the token, no web page may drive the host through a browser: it\n" +
		"answers only requests for the address it listens on (on loopback, also\n" +
		"localhost, 127.0.0.1 and [::1]; on 0.0.0.0, those and the machine's addresses)\n" +
		"or a name --allowed-hosts adds (421 otherwise, as after DNS rebinding), refuses\n" +
		"changes from a page of another origin (403), and takes a POST's body only as\n" +
		"JSON, or a module (415).\n\n" +
		"The web dashboard is at / (it asks for the token, when one is required),\n" +
		"Prometheus metrics at /metrics (with a token, when one is required), and the\n" +
		"health checks at /healthz (the process is up) and /readyz (the host serves\n" +
		"its work), which need no token.",
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		c := &serveConfig{}
		fs.StringVar(&c.db, "db", "", "the SQLite `FILE`, or a postgres:// URL (required)")
		fs.StringVar(&c.hostID, "host-id", "", "on PostgreSQL, this host's `ID` among those sharing the database (default: the machine's name)")
		fs.StringVar(&c.cacheDir, "cache-dir", "", "cache compiled modules in `DIR` (default FILE.wasmcache; on PostgreSQL, the user's cache directory)")
		durationVar(fs, &c.lease, "lease", "0 for the default, 1m", "how long a host holds the work it takes before another may take it over, such as 30s (default 1m)")
		fs.StringVar(&c.addr, "addr", defaultAddr, "listen on `ADDR`, as host:port; port 0 picks a free port (default "+defaultAddr+")")
		fs.Var(&c.tokens, "token", "accept the token `NAME=SECRET[:ROLE]`, ROLE admin (the default), read or worker; NAME stands for its holder in the audit log and in the histories of the instances it changes; may be given more than once (it shows in the process list: prefer --token-file)")
		fs.StringVar(&c.tokenFile, "token-file", "", "accept the tokens in `FILE`, one a line, NAME=SECRET[:ROLE] as --token, or an admin token's SECRET alone; '#' begins a comment; refused if its group or others may read it; read again, with the other token flags' files, on SIGHUP (default $DURABOX_TOKEN, if set)")
		fs.StringVar(&c.readTokenFile, "read-token-file", "", "also accept the token in `FILE`, for reading (GET) only")
		fs.StringVar(&c.workerTokenFile, "worker-token-file", "", "also accept the token in `FILE` from workers outside the host: it may poll for, heartbeat, complete and fail tasks, and nothing more")
		fs.StringVar(&c.tlsCert, "tls-cert", "", "serve https with the certificate (PEM) in `FILE`; needs --tls-key")
		fs.StringVar(&c.tlsKey, "tls-key", "", "the private key (PEM) of --tls-cert, in `FILE`")
		durationVar(fs, &c.retention, "retention", "0, the default, keeps everything", "purge instances `D` after they finish, and delete the history of executions D after they continued as new, batches D after they ended and the audit log's records D old, such as 720h, checking at start and then every --sweep-interval (default: keep everything)")
		durationVar(fs, &c.sweepInterval, "sweep-interval", "0 for the default, a tenth of the retention, between a minute and an hour", "apply --retention every `D`, such as 10m (default a tenth of the retention, between a minute and an hour)")
		fs.StringVar(&c.logFormat, "log-format", "text", "the logs' `FORMAT`: text or json")
		fs.StringVar(&c.logLevel, "log-level", "info", "log at `LEVEL` and above: debug (every request), info, warn or error")
		durationVar(fs, &c.stepTimeout, "step-timeout", "0 for the default, 5s", "the wall-clock deadline `D` for one step of an orchestration, such as 5s; an orchestration that runs longer (an endless loop, or a step slowed by a busy machine) fails (default 5s)")
		wholeVar(fs, &c.stepBudget, "step-budget", 0, span{max: math.MaxInt64, note: "0, the default, sets no budget"}, "the work budget of one step of an orchestration, in loop iterations (`N`, such as 1000000000; a bulk copy or fill of memory counts one per 16 bytes); an orchestration that runs more fails at the same point live and on every replay, on either runtime (default none: only --step-timeout)")
		fs.StringVar(&c.runtime, "runtime", host.RuntimeWazero, "the WebAssembly `RUNTIME` that runs the guests: wazero (pure Go) or wasmtime (Cranelift); either replays the other's histories")
		wholeVar(fs, &c.cacheMiB, "cache-mib", 0, span{max: maxCacheMiB, note: "0 for the default, a quarter of the machine's memory; the most is 16 EiB in bytes"}, "keep orchestration instances live in memory between turns up to `N` MiB between them; past it the least recently used are dropped and replayed from history when they next run (default a quarter of the machine's memory, or of the cgroup's limit)")
		wholeVar(fs, &c.historyWarning, "history-warning", 0, span{max: math.MaxInt64, note: fmt.Sprintf("0 for the default, %d", api.DefaultHistoryWarning)}, fmt.Sprintf("warn about an instance whose current execution's history grows past `N` events: a log line when it does, and a warning in durabox status and the dashboard; executions started from then on are told to continue as new past it (ctx.ShouldContinueAsNew); nothing is refused (default %d)", api.DefaultHistoryWarning))
		wholeVar(fs, &c.maxPersistentEvents, "max-persistent-events", 0, span{max: math.MaxInt32, note: fmt.Sprintf("0 for the default, %d", engine.MaxPersistentEvents)}, fmt.Sprintf("how many persistent events one execution of an instance takes, `N`: a raise past them is refused, and continue-as-new carries the newest N; give every host of a store the same (default %d)", engine.MaxPersistentEvents))
		durationVar(fs, &c.cancelGrace, "cancel-grace", "0 for the default, 10s", "how long `D` an activity attempt whose result is no longer wanted has to clean up, once its next heartbeat told it, before the host stops it; an attempt that sends no heartbeats is stopped at once (default 10s)")
		durationVar(fs, &c.stalledAfter, "stalled-after", "0 for the default, 15m", "count an instance that has not finished as stalled once no turn has changed it for `D`, such as 1h, in the metric durabox_instances_stalled (default 15m)")
		durationVar(fs, &c.activityTimeout, "activity-timeout", "0 for the default, 5m", "the deadline `D` for one attempt of an activity, such as 30s; an attempt that runs longer fails (default 5m); a call that sets its own with durabox.WithTimeout has that one")
		wholeVar(fs, &c.memoryMiB, "memory-mib", 0, span{min: minMemoryMiB, max: maxMemoryMiB, orZero: true,
			note: fmt.Sprintf("0 for the default, 256; a Go guest needs %d MiB, and a wasm instance addresses at most %d", minMemoryMiB, maxMemoryMiB)}, "the memory limit of each wasm instance, in MiB (`N`, at most 4096); an instance that needs more fails (default 256)")
		wholeVar(fs, &c.maxPayloadMiB, "max-payload-mib", 0, span{max: maxPayloadMiB, note: "0 for the default, 16"}, "the largest payload, in MiB (`N`): an input, an event's data, a custom status, a result; larger ones are refused (413) or fail what made them (default 16)")
		wholeVar(fs, &c.scratchMiB, "scratch-mib", host.DefaultScratchLimit>>20, span{max: maxScratchMiB, note: "0 gives activities no scratch directory"}, "how many MiB (`N`) the files of an activity attempt's scratch directory, /scratch, may hold; a write past it fails with \"No space left on device\". Each attempt that uses it gets a directory of its own under $TMPDIR, removed when the attempt ends (default 64; 0 gives activities no scratch directory)")
		fs.StringVar(&c.allowedHosts, "allowed-hosts", "", "also answer requests for the `NAMES`, comma-separated, by which clients reach the host through a proxy or DNS: durabox.example.com for any port, durabox.example.com:8443 for one; a request for a name that is neither one of these nor the address serve listens on is refused (421), as a web page's after DNS rebinding (default none)")
		fs.StringVar(&c.activityQueues, "activity-queue", "", "give the calls of activities to the workers of task queues, `NAME=QUEUE`, comma-separated (Charge=payments,Ship=shipping): a call of NAME that names no queue itself waits on QUEUE for a worker outside the host instead of running in its module (default none)")
		fs.StringVar(&c.allowHTTP, "allow-http", "", "the `HOSTS` activities may reach over HTTP, comma-separated: example.com for any port, example.com:8080 for one (default none)")
		fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", "", "export OpenTelemetry traces over OTLP/HTTP (protobuf) to the collector at the base `URL`, such as http://127.0.0.1:4318, to which /v1/traces is added: a span for each turn, activity attempt, update, query and schedule firing, all of an instance's in one trace (docs/tracing.md) (default $OTEL_EXPORTER_OTLP_ENDPOINT, if set; else no tracing)")
		fs.StringVar(&c.durability, "durability", "full", "the durability `MODE`: full (the default) syncs every commit to disk; normal may lose the last commits if the machine loses power, never if the host crashes")
		fs.StringVar(&c.openCheck, "open-check", "quick", "how much of a SQLite file to check before serving it, `CHECK`: quick (the default) runs SQLite's quick_check over the whole file, which reads every page (about 3 s a GB from the page cache, 30 s from a cold disk); header checks its header, schema and WAL only, and leaves damage in the pages to the reads that meet it. Either refuses a damaged file with what to do")
		return func(ctx context.Context, e *env) error { return c.serve(ctx, e) }
	},
}

// serveConfig is serve's command line.
type serveConfig struct {
	db, addr                 string
	hostID, cacheDir         string
	lease                    time.Duration
	tokens                   tokenList
	tokenFile, readTokenFile string
	workerTokenFile          string
	activityQueues           string
	// queueMap is activityQueues read.
	queueMap                     map[string]string
	tlsCert, tlsKey              string
	retention, stepTimeout       time.Duration
	sweepInterval                time.Duration
	activityTimeout, cancelGrace time.Duration
	stalledAfter                 time.Duration
	logFormat, logLevel          string
	memoryMiB, cacheMiB          uint64
	scratchMiB                   uint64
	stepBudget                   uint64
	historyWarning               int
	maxPersistentEvents          int
	maxPayloadMiB                int
	allowHTTP, durability        string
	allowedHosts, openCheck      string
	runtime                      string
	otlpEndpoint                 string
}

var durabilities = map[string]sqlite.Durability{"full": sqlite.DurabilityFull, "normal": sqlite.DurabilityNormal}

var openChecks = map[string]sqlite.OpenCheck{"quick": sqlite.OpenCheckQuick, "header": sqlite.OpenCheckHeader}

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// minMemoryMiB is the least memory a Go guest starts in, and maxMemoryMiB
// the most a wasm32 instance addresses.
const (
	minMemoryMiB = 16
	maxMemoryMiB = 4096
)

// maxPayloadMiB is the largest payload limit serve takes: a payload is
// held in memory several times over (request, history, guest).
const maxPayloadMiB = 1024

// maxScratchMiB is the most MiB whose bytes an int64 holds.
const maxScratchMiB = math.MaxInt64 >> 20

// maxCacheMiB is the most MiB whose bytes a uint64 holds.
const maxCacheMiB = math.MaxUint64 >> 20

// shutdownTimeout bounds how long serve waits for requests in flight once
// it is told to stop.
const shutdownTimeout = 10 * time.Second

// check refuses a command line serve cannot use, before it creates
// anything.
func (c *serveConfig) check() error {
	switch {
	case c.db == "":
		return usagef("--db FILE is required")
	case durabilities[c.durability] == "":
		return usagef("--durability is %q; it must be full or normal", c.durability)
	case openChecks[c.openCheck] == "":
		return usagef("--open-check is %q; it must be quick or header", c.openCheck)
	case c.runtime != host.RuntimeWazero && c.runtime != host.RuntimeWasmtime:
		return usagef("--runtime is %q; it must be wazero or wasmtime", c.runtime)
	case c.logFormat != "text" && c.logFormat != "json":
		return usagef("--log-format is %q; it must be text or json", c.logFormat)
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return usagef("--tls-cert and --tls-key go together: give both, or neither")
	case c.sweepInterval > 0 && c.retention == 0:
		return usagef("--sweep-interval applies --retention; give --retention too")
	case c.postgres() && c.openCheck != "quick":
		return usagef("--open-check is for a SQLite file; PostgreSQL checks its own pages (docs/operator.md)")
	case c.postgres() && c.durability != "full":
		return usagef("--durability is for a SQLite file; on PostgreSQL, the server's synchronous_commit decides what a commit waits for")
	case !c.postgres() && c.hostID != "":
		return usagef("--host-id names one of several hosts sharing a PostgreSQL database; a SQLite file has one host")
	}
	if _, ok := logLevels[c.logLevel]; !ok {
		return usagef("--log-level is %q; it must be debug, info, warn or error", c.logLevel)
	}
	if c.otlpEndpoint == "" {
		c.otlpEndpoint = os.Getenv(envOTLPEndpoint)
	}
	if err := serving.CheckOTLPEndpoint(c.otlpEndpoint); err != nil {
		return usagef("--otlp-endpoint (or $%s): %v", envOTLPEndpoint, err)
	}
	return nil
}

// envOTLPEndpoint is OpenTelemetry's variable for the collector's base
// URL, which --otlp-endpoint defaults to.
const envOTLPEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"

func (c *serveConfig) logger(e *env) *slog.Logger {
	return serving.Logger(e.stderr, c.logFormat == "json", logLevels[c.logLevel])
}

// hostConfig is the host's part of the command line.
func (c *serveConfig) hostConfig(logger *slog.Logger) serving.Config {
	return serving.Config{Runtime: c.runtime, StepBudget: c.stepBudget, AllowHTTP: commaList(c.allowHTTP), StepTimeout: c.stepTimeout,
		ActivityTimeout: c.activityTimeout, MemoryMiB: c.memoryMiB, CacheMiB: c.cacheMiB, HistoryWarning: c.historyWarning, MaxPersistentEvents: c.maxPersistentEvents,
		Retention: c.retention, SweepInterval: c.sweepInterval, MaxPayloadMiB: c.maxPayloadMiB, Logger: logger,
		CacheDir: c.cacheDir, Lease: c.lease, Shared: c.postgres(), ActivityQueues: c.queueMap, CancelGrace: c.cancelGrace,
		ScratchMiB: c.scratchMiB, NoScratch: c.scratchMiB == 0, StalledAfter: c.stalledAfter}
}

// activityQueues reads --activity-queue: NAME=QUEUE pairs, comma-separated.
func activityQueues(flag string) (map[string]string, error) {
	var m map[string]string
	for _, pair := range commaList(flag) {
		name, queue, ok := strings.Cut(pair, "=")
		name, queue = strings.TrimSpace(name), strings.TrimSpace(queue)
		if !ok || name == "" {
			return nil, usagef("--activity-queue has %q; give the activity's name, '=' and the task queue, such as Charge=payments", pair)
		}
		if err := abi.CheckTaskQueue(queue); err != nil {
			return nil, usagef("--activity-queue %s: %v", pair, err)
		}
		if _, dup := m[name]; dup {
			return nil, usagef("--activity-queue names activity %q twice; give each one queue", name)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[name] = queue
	}
	return m, nil
}

// serve listens first, then opens the store and runs the host: a port
// that is taken, a bad token or certificate, leave nothing behind.
func (c *serveConfig) serve(ctx context.Context, e *env) (err error) {
	if err := c.check(); err != nil {
		return err
	}
	logger := c.logger(e)
	if c.logFormat == "json" {
		// Every line in JSON, the failure too; a mistake in the command
		// line is still told with the usage, for the person who typed it.
		defer func() {
			if err != nil && !errors.As(err, new(usageError)) {
				logger.Error("serve failed", "err", err.Error())
				err = exitError{code: 1}
			}
		}()
	}
	// Checked before anything is made; runHost makes the server's own.
	handlerOpts := server.Options{Logger: logger, MaxPayload: c.maxPayloadMiB << 20, Hosts: commaList(c.allowedHosts)}
	if handlerOpts.Tokens, err = c.serveTokens(); err != nil {
		return err
	}
	if c.queueMap, err = activityQueues(c.activityQueues); err != nil {
		return err
	}
	if err := handlerOpts.Validate(); err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	var tlsConfig *tls.Config
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return fmt.Errorf("durabox: serve: --tls-cert and --tls-key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	defer ln.Close()
	hosts := append(listenHosts(c.addr, ln.Addr()), commaList(c.allowedHosts)...)
	loopback := isLoopback(ln.Addr())
	if !loopback && len(handlerOpts.Tokens) == 0 {
		return fmt.Errorf("durabox: serve: --addr %s listens beyond loopback, where anyone who reaches it could deploy code and read every instance; "+
			"give a token with --token-file FILE or $DURABOX_TOKEN (and TLS with --tls-cert and --tls-key), or listen on 127.0.0.1", c.addr)
	}
	if !loopback && tlsConfig == nil {
		logger.Warn("serving beyond loopback without TLS: the token and the data travel in clear; give --tls-cert and --tls-key, or put a TLS proxy in front")
	}

	hc := c.hostConfig(logger)
	if hc.CacheDir == "" {
		if hc.CacheDir, err = c.defaultCacheDir(); err != nil {
			return err
		}
	}
	return runHost(ctx, e, c, ln, tlsConfig, hc, hosts, handlerOpts)
}

// commaList returns the items of a comma-separated flag, without white
// space around them.
func commaList(flag string) []string {
	var items []string
	for _, item := range strings.Split(flag, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// listenHosts returns the names a host listening on ln, at --addr addr,
// answers to (server.Options.Hosts): the address it listens on, as
// given and as bound; on loopback, localhost, 127.0.0.1 and [::1] too;
// on every address (0.0.0.0, [::]), those and the addresses of the
// machine's interfaces as they are when it starts. Each on its port.
func listenHosts(addr string, ln net.Addr) []string {
	tcp := ln.(*net.TCPAddr)
	port := strconv.Itoa(tcp.Port)
	ips := []string{tcp.IP.String()}
	if given, _, err := net.SplitHostPort(addr); err == nil && given != "" {
		ips = append(ips, given)
	}
	if tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		ips = append(ips, "localhost", "127.0.0.1", "::1")
	}
	if tcp.IP.IsUnspecified() {
		addrs, _ := net.InterfaceAddrs() // none on failure: --allowed-hosts gives them
		for _, a := range addrs {
			if ipNet, ok := a.(*net.IPNet); ok && !ipNet.IP.IsLinkLocalUnicast() {
				ips = append(ips, ipNet.IP.String())
			}
		}
	}
	var hosts []string
	for _, ip := range ips {
		if h := net.JoinHostPort(ip, port); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// clockInterval is how often a host on PostgreSQL measures its clock
// against the database server's.
const clockInterval = 30 * time.Second

// envClockSkew, for fault tests, sets a host's clock off by a duration
// ("90s", "-2m"), as a host whose clock is wrong has it.
const envClockSkew = "DURABOX_CLOCK_SKEW"

// localClock is the host's own clock: the machine's, off by
// $DURABOX_CLOCK_SKEW when that is set.
func localClock() (func() time.Time, error) {
	v := os.Getenv(envClockSkew)
	if v == "" {
		return time.Now, nil
	}
	skew, err := time.ParseDuration(v)
	if err != nil {
		return nil, fmt.Errorf("durabox: serve: $%s is %q, not a duration such as 90s or -2m (it sets this host's clock off, for fault tests; unset it to use the machine's)", envClockSkew, v)
	}
	return func() time.Time { return time.Now().Add(skew) }, nil
}

// postgres reports whether --db names a PostgreSQL database.
func (c *serveConfig) postgres() bool { return isPostgres(c.db) }

// servedAt is the address serve says it serves on: the host --addr gave
// (0.0.0.0, not the [::] the listener reports for it), with the port it
// listens on (the one it picked, for port 0).
func servedAt(given string, addr net.Addr) string {
	host, _, err := net.SplitHostPort(given)
	tcp, ok := addr.(*net.TCPAddr)
	if err != nil || host == "" || !ok {
		return addr.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// isLoopback reports whether a listener's address is on loopback only.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// runHost runs a host configured by hc on the store of c.db, served on ln
// for hosts, with the tokens of tokens, until ctx is done or a signal
// comes.
func runHost(ctx context.Context, e *env, c *serveConfig, ln net.Listener, tlsConfig *tls.Config, hc serving.Config, hosts []string, tokens server.Options) (err error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger, opts := hc.Logger, hc.Host()
	if opts.Clock, err = localClock(); err != nil {
		return err
	}
	st, err := c.open(opts)
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	defer func() {
		if closeErr := st.Close(); closeErr != nil {
			err = errors.Join(err, fmt.Errorf("durabox: serve: close the store: %w", closeErr))
		}
	}()
	if pg, ok := st.(*postgres.Store); ok {
		// Hosts that share a database keep its server's time, whatever
		// their own clocks say.
		clock := postgres.NewClock(pg, opts.Clock)
		if _, err := clock.Measure(ctx); err != nil {
			logger.Warn("the database server's clock cannot be read; the host follows its own until it can", "err", err)
		}
		clock.Log(logger)
		opts.Clock = clock.Now
		go clock.Follow(ctx, clockInterval, logger)
	}
	if c.otlpEndpoint != "" {
		if opts.TraceExporter, err = serving.TraceExporter(ctx, c.otlpEndpoint); err != nil {
			return fmt.Errorf("durabox: serve: %w", err)
		}
		// OpenTelemetry reports what it could not export through a handler
		// of the process's: the host's log, rather than a line of its own
		// on stderr.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			logger.Warn("traces not exported; check that the collector at --otlp-endpoint is up", "endpoint", c.otlpEndpoint, "err", err)
		}))
		logger.Info("exporting traces", "endpoint", c.otlpEndpoint)
	}
	h, err := host.New(st, opts)
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	defer func() {
		if closeErr := h.Close(); closeErr != nil {
			err = errors.Join(err, fmt.Errorf("durabox: serve: close the host: %w", closeErr))
		}
	}()
	handlerOpts := hc.Server(h, hosts)
	handlerOpts.Tokens = tokens.Tokens
	handler, err := server.New(h, handlerOpts)
	if err != nil {
		return fmt.Errorf("durabox: serve: %w", err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go reloadTokens(ctx, c, hup, handler.(server.TokenSetter), logger)

	// Stop everything when told to, or when the host or the server stops
	// by itself (which only a failure makes them do).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		TLSConfig:         tlsConfig,
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
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConfig)
	}
	go func() {
		err := srv.Serve(ln)
		cancel()
		serverDone <- err
	}()
	url := scheme + "://" + servedAt(c.addr, ln.Addr())
	if c.logFormat == "json" {
		logger.Info("serving", "url", url, "db", c.dbName(), "dashboard", url+"/")
	} else {
		fmt.Fprintf(e.stderr, "durabox: serving on %s (db %s)\n", url, c.dbName())
		fmt.Fprintf(e.stderr, "durabox: the dashboard is at %s/\n", url)
	}

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
