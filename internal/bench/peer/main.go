// Durabox peer benchmark, the counterpart of the DBOS and Restate harnesses of ../shared/peers and
// a Temporal harness of the same shape: the same workloads, driven through Durabox's public
// HTTP API (the host/client package) against a `durabox serve` process that
// this binary starts on a fresh store and stops by PID.
//
// One run, in order:
//  0. the raw commit rate of the store's disk (SQLite: a WAL, synchronous=FULL
//     commit loop on a file in the run's temp dir; PostgreSQL: single-row
//     INSERTs, one per transaction, in the fresh database, as Durabox's
//     pg_commit_rate and the DBOS harness measure it);
//  1. start `durabox serve --db STORE --addr 127.0.0.1:0`, wait for /readyz,
//     deploy the hello module (Greeting -> SayHello) and the bench guest
//     (FanOut, Sequential over the activity Echo);
//  2. warm-up: -warmup Greeting instances and one Sequential(1), not measured;
//  3. hello_latency: -n1 Greeting instances one after the other (Start call
//     to Wait returned), p50 and p99;
//  4. hello_throughput: -n Greeting instances, at most -c in flight, each a
//     Start followed by a Wait; wall time from the first start to the last
//     result; the same run's per-instance latency is hello_loaded_latency;
//  5. fanout: one FanOut(-fanout) instance (all activities at once, joined);
//  6. sequential: one Sequential(-seq) instance (activities in series).
//
// Each figure is printed on a line "DURABOX <name> <value> <unit>"; lines
// starting with # describe the run. Every result is checked (the greeting
// text; n(n-1)/2 for the sums); a workload with any failure prints no
// DURABOX line of its own and the binary exits 1. Every loop is bounded in
// count and in time. Only loopback addresses are used.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/jackc/pgx/v5"
	_ "github.com/mattn/go-sqlite3"
)

// ---------------------------------------------------------------- CPU

// cpuSec returns utime+stime (seconds) of a process from /proc/<pid>/stat
// ("self" for this process), or -1.
func cpuSec(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return -1
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

// postgresCPU sums the CPU time of every process named "postgres" on this
// machine; -1 if none is visible (or the store is SQLite). Backends that
// exit during a phase take their time with them: a lower bound.
func postgresCPU() float64 {
	if !usePostgres {
		return -1
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	total, seen := 0.0, false
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		if c := cpuSec(e.Name()); c >= 0 {
			total += c
			seen = true
		}
	}
	if !seen {
		return -1
	}
	return total
}

var (
	usePostgres bool
	serverPID   string // the durabox serve process, for its CPU time
)

type cpuMark struct{ server, pg, bench float64 }

func markCPU() cpuMark {
	return cpuMark{server: cpuSec(serverPID), pg: postgresCPU(), bench: cpuSec("self")}
}

type cpuUse struct {
	ServerCPUSec float64 `json:"durabox_cpu_sec"`
	PGCPUSec     float64 `json:"postgres_cpu_sec"`
	BenchCPUSec  float64 `json:"bench_cpu_sec"`
	HostCPUUtil  float64 `json:"cpu_util_of_all_cores"`
}

func since(a cpuMark, wall float64) cpuUse {
	b := markCPU()
	u := cpuUse{ServerCPUSec: b.server - a.server, PGCPUSec: -1, BenchCPUSec: b.bench - a.bench}
	all := u.ServerCPUSec + u.BenchCPUSec
	if a.pg >= 0 && b.pg >= 0 {
		u.PGCPUSec = b.pg - a.pg
		all += u.PGCPUSec
	}
	u.HostCPUUtil = all / wall / float64(runtime.NumCPU())
	return u
}

func (u cpuUse) String() string {
	pg := ""
	if u.PGCPUSec >= 0 {
		pg = fmt.Sprintf(" postgres=%.2fs", u.PGCPUSec)
	}
	return fmt.Sprintf("cpu: durabox=%.2fs%s bench=%.2fs (%.0f%% of %d cores)", u.ServerCPUSec, pg, u.BenchCPUSec, 100*u.HostCPUUtil, runtime.NumCPU())
}

// ---------------------------------------------------------------- store counters

// commitsNow reads the host's own count of store transactions from
// /metrics (durabox_store_commit_duration_seconds_count); -1 if it cannot.
func commitsNow(base string, hc *http.Client) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return -1
	}
	var total float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "durabox_store_commit_duration_seconds_count") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			total += v
			found = true
		}
	}
	if !found {
		return -1
	}
	return int64(total)
}

// pgMark is what the PostgreSQL server had done at a moment: the next
// transaction ID (every writing transaction takes one) and the WAL insert
// position, read as the DBOS harness reads them. Cluster-wide.
type pgMark struct {
	xid, lsn int64
	ok       bool
}

var statConn *pgx.Conn

func markPG() pgMark {
	if statConn == nil {
		return pgMark{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var m pgMark
	err := statConn.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
		(pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&m.xid, &m.lsn)
	m.ok = err == nil
	return m
}

type storeUse struct {
	Commits  int64 `json:"store_transactions"`
	WriteTx  int64 `json:"pg_write_transactions,omitempty"`
	WALBytes int64 `json:"pg_wal_bytes,omitempty"`
	pgOK     bool
}

// report prints the write transactions (PostgreSQL's, cluster-wide)
// and the store's transactions of a figure, per item: <figure>_write_tx_per_<item>,
// <figure>_store_tx_per_<item>.
func (u storeUse) report(figure, item string, n float64) {
	if u.pgOK {
		report(figure+"_write_tx_per_"+item, float64(u.WriteTx)/n, "tx/"+item)
	}
	if u.Commits >= 0 {
		report(figure+"_store_tx_per_"+item, float64(u.Commits)/n, "tx/"+item)
	}
}

type storeMark struct {
	commits int64
	pg      pgMark
}

func (b *bench) markStore() storeMark {
	return storeMark{commits: commitsNow(b.base, b.hc), pg: markPG()}
}

func (b *bench) storeSince(a storeMark) storeUse {
	c := commitsNow(b.base, b.hc)
	u := storeUse{Commits: -1}
	if a.commits >= 0 && c >= 0 {
		u.Commits = c - a.commits
	}
	p := markPG()
	if a.pg.ok && p.ok {
		u.WriteTx, u.WALBytes, u.pgOK = p.xid-a.pg.xid, p.lsn-a.pg.lsn, true
	}
	return u
}

func (u storeUse) line(per int, unit string) string {
	if per <= 0 {
		return "store: no counts"
	}
	s := fmt.Sprintf("store: %d transactions by the host's /metrics (%.2f per %s)", u.Commits, float64(u.Commits)/float64(per), unit)
	if u.pgOK {
		s += fmt.Sprintf("; postgres (cluster-wide): %d write transactions (%.2f per %s), %.1f KiB WAL (%.0f B per %s)",
			u.WriteTx, float64(u.WriteTx)/float64(per), unit, float64(u.WALBytes)/1024, float64(u.WALBytes)/float64(per), unit)
	}
	return s
}

// ---------------------------------------------------------------- harness

type bench struct {
	c    *client.Client
	hc   *http.Client
	base string
}

type helloResult struct {
	N           int     `json:"n"`
	Concurrency int     `json:"concurrency"`
	Completed   int64   `json:"completed"`
	Failed      int64   `json:"failed"`
	WallSec     float64 `json:"wall_sec"`
	PerSec      float64 `json:"instances_per_sec"`
	P50ms       float64 `json:"p50_ms"`
	P90ms       float64 `json:"p90_ms"`
	P99ms       float64 `json:"p99_ms"`
	Maxms       float64 `json:"max_ms"`
	Minms       float64 `json:"min_ms"`
	Meanms      float64 `json:"mean_ms"`
	// Host* is the host's own record of each instance (UpdatedAt minus
	// CreatedAt: creation to recorded completion), Durabox's in-process
	// bench's latency, for comparison with the client round trip.
	HostP50ms float64  `json:"host_recorded_p50_ms"`
	HostP99ms float64  `json:"host_recorded_p99_ms"`
	FirstErr  string   `json:"first_error,omitempty"`
	CPU       cpuUse   `json:"cpu"`
	Store     storeUse `json:"store"`
}

type singleResult struct {
	Orchestration string   `json:"orchestration"`
	N             int      `json:"n"`
	WallSec       float64  `json:"wall_sec"`
	HostSec       float64  `json:"host_recorded_sec"`
	Result        int      `json:"result"`
	Expected      int      `json:"expected"`
	OK            bool     `json:"ok"`
	Err           string   `json:"error,omitempty"`
	CPU           cpuUse   `json:"cpu"`
	Store         storeUse `json:"store"`
}

// pct is the nearest-rank percentile of sorted, in ms (as the DBOS harness).
func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	idx := int(float64(len(sorted))*p+0.999999) - 1
	idx = max(0, min(idx, len(sorted)-1))
	return float64(sorted[idx].Microseconds()) / 1000
}

func sortDur(ds []time.Duration) { sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] }) }

// runOne starts one instance and waits for it; it fails unless the
// instance completed.
func (b *bench) runOne(ctx context.Context, name, id string, input any) (api.Instance, error) {
	in, err := json.Marshal(input)
	if err != nil {
		return api.Instance{}, err
	}
	got, err := b.c.Start(ctx, api.StartRequest{Name: name, Input: in, ID: id})
	if err != nil {
		return api.Instance{}, err
	}
	if got != id {
		return api.Instance{}, fmt.Errorf("start %s: the host answered id %q", id, got)
	}
	inst, err := b.c.Wait(ctx, id)
	if err != nil {
		return inst, err
	}
	if inst.Status != engine.StatusCompleted {
		msg := ""
		if inst.Failure != nil {
			b, _ := json.Marshal(inst.Failure)
			msg = string(b)
		}
		return inst, fmt.Errorf("instance %s: status %s %s", id, inst.Status, msg)
	}
	return inst, nil
}

// ended prints what the store did for a hello run and its first error,
// and reports whether every instance completed.
func (hr helloResult) ended() bool {
	fmt.Printf("#   %s\n", hr.Store.line(int(hr.Completed), "instance"))
	if hr.FirstErr != "" {
		fmt.Printf("#   first error: %s\n", hr.FirstErr)
	}
	return hr.Failed == 0 && hr.Completed == int64(hr.N)
}

func (b *bench) runHello(prefix string, n, conc int, perInst, total time.Duration) helloResult {
	deadline := time.Now().Add(total)
	lat := make([]time.Duration, n)
	hostLat := make([]time.Duration, n)
	ok := make([]bool, n)
	var completed, failed int64
	var firstErr atomic.Value
	var next int64 = -1
	var wg sync.WaitGroup
	sm := b.markStore()
	cm := markCPU()
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(atomic.AddInt64(&next, 1))
				if i >= n || time.Now().After(deadline) {
					return
				}
				name := fmt.Sprintf("world-%d", i)
				ctx, cancel := context.WithTimeout(context.Background(), perInst)
				t0 := time.Now()
				inst, err := b.runOne(ctx, "Greeting", fmt.Sprintf("%s-hello-%d", prefix, i), name)
				d := time.Since(t0)
				cancel()
				if err == nil {
					var out string
					if jerr := json.Unmarshal(inst.Result, &out); jerr != nil || out != "Hello, "+name+"!" {
						err = fmt.Errorf("instance %s: bad result %s", inst.ID, inst.Result)
					}
				}
				if err != nil {
					atomic.AddInt64(&failed, 1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lat[i], hostLat[i], ok[i] = d, inst.UpdatedAt.Sub(inst.CreatedAt), true
				atomic.AddInt64(&completed, 1)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	r := helloResult{N: n, Concurrency: conc, Completed: completed, Failed: failed, WallSec: wall.Seconds()}
	r.CPU = since(cm, wall.Seconds())
	r.Store = b.storeSince(sm)
	var ds, hs []time.Duration
	var sum time.Duration
	for i := range lat {
		if ok[i] {
			ds = append(ds, lat[i])
			hs = append(hs, hostLat[i])
			sum += lat[i]
		}
	}
	sortDur(ds)
	sortDur(hs)
	r.PerSec = float64(completed) / wall.Seconds()
	r.P50ms, r.P90ms, r.P99ms = pct(ds, 0.50), pct(ds, 0.90), pct(ds, 0.99)
	r.HostP50ms, r.HostP99ms = pct(hs, 0.50), pct(hs, 0.99)
	if len(ds) > 0 {
		r.Minms = float64(ds[0].Microseconds()) / 1000
		r.Maxms = float64(ds[len(ds)-1].Microseconds()) / 1000
		r.Meanms = float64(sum.Microseconds()) / 1000 / float64(len(ds))
	}
	if v := firstErr.Load(); v != nil {
		r.FirstErr = v.(string)
	}
	return r
}

func (b *bench) runSingle(prefix, name string, n int, timeout time.Duration) singleResult {
	r := singleResult{Orchestration: name, N: n, Expected: n * (n - 1) / 2}
	sm := b.markStore()
	cm := markCPU()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	t0 := time.Now()
	inst, err := b.runOne(ctx, name, fmt.Sprintf("%s-%s-%d", prefix, name, n), n)
	r.WallSec = time.Since(t0).Seconds()
	r.CPU = since(cm, r.WallSec)
	r.Store = b.storeSince(sm)
	if err == nil {
		r.HostSec = inst.UpdatedAt.Sub(inst.CreatedAt).Seconds()
		if jerr := json.Unmarshal(inst.Result, &r.Result); jerr != nil {
			err = fmt.Errorf("instance %s: bad result %s", inst.ID, inst.Result)
		}
	}
	if err != nil {
		r.Err = err.Error()
	}
	r.OK = err == nil && r.Result == r.Expected
	return r
}

// report prints one figure, formatted as the Durabox suite and the peer
// harnesses format theirs.
func report(name string, value float64, unit string) {
	switch {
	case value >= 100:
		fmt.Printf("DURABOX %s %.0f %s\n", name, value, unit)
	case value >= 1:
		fmt.Printf("DURABOX %s %.2f %s\n", name, value, unit)
	default:
		fmt.Printf("DURABOX %s %.4f %s\n", name, value, unit)
	}
}

// ---------------------------------------------------------------- stores

// checkLoopback refuses a PostgreSQL server that is not on this machine.
func checkLoopback(dbURL string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("bad -pg: %w", err)
	}
	hosts := []string{cfg.Host}
	for _, fb := range cfg.Fallbacks {
		hosts = append(hosts, fb.Host)
	}
	for _, h := range hosts {
		if strings.HasPrefix(h, "/") || h == "localhost" {
			continue
		}
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("refusing non-loopback database host %q", h)
		}
	}
	return cfg, nil
}

// recreate drops and creates the database cfg names, connected to the
// server's "postgres" database.
func recreate(cfg *pgx.ConnConfig) error {
	name := cfg.Database
	if name == "" || name == "postgres" || name == "template0" || name == "template1" {
		return fmt.Errorf("refusing to recreate database %q", name)
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+id)
	return err
}

func pgInfo(cfg *pgx.ConnConfig) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	info := map[string]string{}
	var v string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return nil, err
	}
	info["version"] = v
	for _, s := range []string{"server_version", "synchronous_commit", "fsync", "wal_sync_method", "full_page_writes", "commit_delay", "shared_buffers", "max_connections"} {
		if err := conn.QueryRow(ctx, "SHOW "+s).Scan(&v); err != nil {
			return nil, err
		}
		info[s] = v
	}
	return info, nil
}

// pgCommitRate: single-row INSERTs of 200 bytes, each its own transaction,
// for d, in a scratch table (Durabox's pg_commit_rate, the DBOS harness's).
func pgCommitRate(cfg *pgx.ConnConfig, d time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS public.dbxbench_commit_rate (id bigserial PRIMARY KEY, v bytea)`); err != nil {
		return 0, err
	}
	defer conn.Exec(context.Background(), `DROP TABLE IF EXISTS public.dbxbench_commit_rate`)
	payload := make([]byte, 200)
	n, start := 0, time.Now()
	for time.Since(start) < d {
		if _, err := conn.Exec(ctx, `INSERT INTO public.dbxbench_commit_rate (v) VALUES ($1)`, payload); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// sqliteCommitRate: the same loop on a SQLite file in WAL mode at
// synchronous=FULL (Durabox's sqlite_commit_rate at its default durability).
func sqliteCommitRate(path string, d time.Duration) (float64, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_sync=FULL")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	defer os.Remove(path)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`); err != nil {
		return 0, err
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		return 0, fmt.Errorf("journal_mode is %q (%v), want wal", mode, err)
	}
	payload := make([]byte, 200)
	n, start := 0, time.Now()
	for time.Since(start) < d {
		if _, err := db.Exec(`INSERT INTO t (v) VALUES (?)`, payload); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// ---------------------------------------------------------------- the server

type server struct {
	cmd  *exec.Cmd
	addr string
	done chan error
}

var servingRE = regexp.MustCompile(`durabox: serving on (http://\S+)`)

// startServer runs `durabox serve` on a free loopback port with its stderr
// going to logPath, and returns once it has said where it listens. The
// process dies with this one (Pdeathsig) if this one dies first.
func startServer(bin string, args []string, logPath string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logf
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if m := servingRE.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		io.Copy(logf, pr)
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		s.done <- err
	}()
	select {
	case a := <-found:
		s.addr = a
		return s, nil
	case err := <-s.done:
		s.done <- err
		return nil, fmt.Errorf("durabox serve exited before serving (%v); see %s", err, logPath)
	case <-time.After(60 * time.Second):
		s.stop()
		return nil, fmt.Errorf("durabox serve did not say where it listens within 60s; see %s", logPath)
	}
}

// stop sends SIGTERM to the server's PID, then SIGKILL after 30s.
func (s *server) stop() error {
	if s == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("durabox serve (pid %d) did not stop within 30s of SIGTERM; killed", s.cmd.Process.Pid)
	}
}

// ---------------------------------------------------------------- main

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		log.Fatalf("$%s=%q is not an integer", name, v)
	}
	return def
}

func envStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	storeKind := flag.String("store", envStr("STORE", "sqlite"), "sqlite (a fresh file in a temp dir) or postgres (env STORE)")
	pgURL := flag.String("pg", envStr("DURABOX_BENCH_DB", "postgres://postgres@127.0.0.1:5432/dbxbench?sslmode=disable"), "with -store postgres: the database, dropped and recreated (loopback only; env DURABOX_BENCH_DB)")
	bin := flag.String("durabox", envStr("DURABOX_BIN", "bin/durabox"), "the durabox command (env DURABOX_BIN)")
	helloWasm := flag.String("hello-wasm", envStr("HELLO_WASM", "bin/hello.wasm"), "the hello example module: Greeting calling SayHello (env HELLO_WASM)")
	guestWasm := flag.String("guest-wasm", envStr("GUEST_WASM", "bin/guest.wasm"), "the bench guest module: FanOut and Sequential over Echo (env GUEST_WASM)")
	outDir := flag.String("out", envStr("OUTDIR", "."), "where the server's log goes (env OUTDIR)")
	n := flag.Int("n", envInt("N", 2000), "hello_throughput: Greeting instances (env N; 0 = skip)")
	conc := flag.Int("c", envInt("C", 64), "hello_throughput: most instances in flight (env C)")
	n1 := flag.Int("n1", envInt("N1", 100), "hello_latency: Greeting instances one after the other (env N1; 0 = skip)")
	warm := flag.Int("warmup", envInt("WARMUP", 50), "unmeasured Greeting warm-up instances (env WARMUP)")
	fan := flag.Int("fanout", envInt("FANOUT", 1000), "fanout: activities started at once in the one instance (env FANOUT; 0 = skip)")
	seq := flag.Int("seq", envInt("SEQ", 1000), "sequential: activities in series in the one instance (env SEQ; 0 = skip)")
	pool := flag.Int("http-pool", envInt("HTTP_POOL", -1), "idle keep-alive connections the HTTP client keeps to the host (env HTTP_POOL; -1: c+8; 0: Go's default of 2)")
	commitDur := flag.Duration("commit-rate", 2*time.Second, "measure the store disk's raw one-client commit rate for this long first (0 = skip)")
	perInst := flag.Duration("per-instance-timeout", 60*time.Second, "per Greeting instance timeout")
	total := flag.Duration("total-timeout", 10*time.Minute, "time limit of each hello phase")
	singleTO := flag.Duration("single-timeout", 10*time.Minute, "time limit of the fanout and sequential instances")
	watchdog := flag.Duration("watchdog", 30*time.Minute, "exit with status 3 if the whole run takes longer")
	jsonOut := flag.String("json", "", "write results as JSON to this file")
	flag.Parse()

	var srv *server
	var tmp string
	time.AfterFunc(*watchdog, func() {
		fmt.Fprintf(os.Stderr, "dbxbench: watchdog: run exceeded %s\n", *watchdog)
		srv.stop()
		os.Exit(3)
	})
	fatal := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "dbxbench: "+format+"\n", a...)
		if err := srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "dbxbench: stop server:", err)
		}
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		os.Exit(1)
	}

	tmp, err := os.MkdirTemp("", "dbxbench-")
	if err != nil {
		tmp = ""
	}
	if err != nil {
		fatal("temp dir: %v", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fatal("out dir: %v", err)
	}
	helloBytes, err := os.ReadFile(*helloWasm)
	if err != nil {
		fatal("%v", err)
	}
	guestBytes, err := os.ReadFile(*guestWasm)
	if err != nil {
		fatal("%v", err)
	}
	out := map[string]any{"go": runtime.Version(), "store": *storeKind}
	hostname, _ := os.Hostname()
	fmt.Printf("# %s, %s/%s, %d CPUs, %s, %s, store=%s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), hostname, runtime.Version(), *storeKind)

	var dbArg string
	serveArgs := []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}
	switch *storeKind {
	case "sqlite":
		dbArg = filepath.Join(tmp, "durabox.db")
		fmt.Printf("# sqlite: a fresh file in the temp dir (%s), serve's default durability (full: synchronous=FULL, every commit synced)\n", filepath.Base(tmp))
		if *commitDur > 0 {
			rate, err := sqliteCommitRate(filepath.Join(tmp, "raw.db"), *commitDur)
			if err != nil {
				fatal("sqlite commit rate: %v", err)
			}
			report("sqlite_commit_rate", rate, "commits/s")
			out["sqlite_commit_rate"] = rate
		}
	case "postgres":
		usePostgres = true
		cfg, err := checkLoopback(*pgURL)
		if err != nil {
			fatal("%v", err)
		}
		if err := recreate(cfg); err != nil {
			fatal("recreate database %q: %v", cfg.Database, err)
		}
		info, err := pgInfo(cfg)
		if err != nil {
			fatal("postgres info: %v", err)
		}
		out["postgres"] = info
		fmt.Printf("# postgres: database %s dropped and recreated; %s\n", cfg.Database, info["version"])
		fmt.Printf("# postgres settings: synchronous_commit=%s fsync=%s wal_sync_method=%s full_page_writes=%s commit_delay=%s shared_buffers=%s max_connections=%s\n",
			info["synchronous_commit"], info["fsync"], info["wal_sync_method"], info["full_page_writes"], info["commit_delay"], info["shared_buffers"], info["max_connections"])
		if *commitDur > 0 {
			rate, err := pgCommitRate(cfg, *commitDur)
			if err != nil {
				fatal("pg commit rate: %v", err)
			}
			report("pg_commit_rate", rate, "commits/s")
			out["pg_commit_rate"] = rate
		}
		sc := cfg.Copy()
		sc.Database = "postgres"
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		statConn, err = pgx.ConnectConfig(ctx, sc)
		cancel()
		if err != nil {
			fmt.Printf("# no write-transaction and WAL counts: %v\n", err)
			statConn = nil
		}
		dbArg = *pgURL
		// A compile cache of its own, so the run starts cold as on SQLite.
		serveArgs = append(serveArgs, "--cache-dir", filepath.Join(tmp, "wasmcache"))
	default:
		fatal("-store %q: want sqlite or postgres", *storeKind)
	}
	serveArgs = append(serveArgs, "--db", dbArg)

	logPath := filepath.Join(*outDir, "serve.log")
	ts := time.Now()
	srv, err = startServer(*bin, serveArgs, logPath)
	if err != nil {
		fatal("%v", err)
	}
	serverPID = strconv.Itoa(srv.cmd.Process.Pid)
	fmt.Printf("# durabox serve pid %s on %s (--log-level warn), serving after %.2fs\n", serverPID, srv.addr, time.Since(ts).Seconds())

	tr := http.DefaultTransport.(*http.Transport).Clone()
	poolSize := *pool
	if poolSize < 0 {
		poolSize = *conc + 8
	}
	if poolSize > 0 {
		tr.MaxIdleConns = poolSize
		tr.MaxIdleConnsPerHost = poolSize
	}
	hc := &http.Client{Transport: tr}
	b := &bench{c: client.New(srv.addr, &client.Options{HTTPClient: hc}), hc: hc, base: srv.addr}
	fmt.Printf("# http client: keep-alive pool of %d idle connections per host (0 = Go's default, 2)\n", poolSize)

	// Ready: /readyz answers 200 once the host serves its work.
	readyBy := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := b.c.Ready(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(readyBy) {
			fatal("host not ready within 60s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, m := range []struct {
		name  string
		bytes []byte
		want  []string
	}{{"hello", helloBytes, []string{"Greeting"}}, {"guest", guestBytes, []string{"FanOut", "Sequential"}}} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		td := time.Now()
		mod, err := b.c.Deploy(ctx, m.bytes)
		cancel()
		if err != nil {
			fatal("deploy %s: %v", m.name, err)
		}
		fmt.Printf("# deployed %s (%d bytes) in %.2fs: %s orchestrations %v activities %v\n", m.name, len(m.bytes), time.Since(td).Seconds(), mod.Hash[:12], mod.Orchestrations, mod.Activities)
		for _, w := range m.want {
			if !slices.Contains(mod.Orchestrations, w) {
				fatal("the %s module registers no orchestration %s", m.name, w)
			}
		}
	}
	prefix := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	failed := false

	if *warm > 0 {
		wr := b.runHello(prefix+"-warm", *warm, min(*conc, *warm), *perInst, 2*time.Minute)
		fmt.Printf("# warmup: %d/%d ok in %.2fs\n", wr.Completed, wr.N, wr.WallSec)
		if wr.Failed > 0 || wr.Completed != int64(wr.N) {
			fatal("warm-up failed: %s", wr.FirstErr)
		}
		out["warmup"] = wr
	}
	// The guest module's first instance compiles it; keep that out of the
	// fan-out and sequential figures.
	{
		r := b.runSingle(prefix+"-warm", "Sequential", 2, 2*time.Minute)
		fmt.Printf("# warmup: Sequential(2) ok=%v in %.2fs\n", r.OK, r.WallSec)
		if !r.OK {
			fatal("warm-up Sequential(2) failed: result %d, want %d; %s", r.Result, r.Expected, r.Err)
		}
	}
	if *n1 > 0 {
		hr := b.runHello(prefix+"-serial", *n1, 1, *perInst, *total)
		fmt.Printf("# Greeting serial: n=%d c=1 completed=%d failed=%d wall=%.3fs  => %.1f instances/s  latency ms: p50=%.2f p90=%.2f p99=%.2f max=%.2f mean=%.2f; host-recorded p50=%.2f p99=%.2f\n",
			hr.N, hr.Completed, hr.Failed, hr.WallSec, hr.PerSec, hr.P50ms, hr.P90ms, hr.P99ms, hr.Maxms, hr.Meanms, hr.HostP50ms, hr.HostP99ms)
		fmt.Printf("#   %s\n", hr.CPU)
		if !hr.ended() {
			failed = true
		} else {
			report("hello_latency_p50", hr.P50ms, "ms")
			report("hello_latency_p99", hr.P99ms, "ms")
		}
		out["hello_serial"] = hr
	}
	if *n > 0 {
		hr := b.runHello(prefix, *n, *conc, *perInst, *total)
		fmt.Printf("# Greeting: n=%d c=%d completed=%d failed=%d wall=%.3fs  => %.1f instances/s  latency ms: p50=%.1f p90=%.1f p99=%.1f max=%.1f mean=%.1f; host-recorded p50=%.1f p99=%.1f\n",
			hr.N, hr.Concurrency, hr.Completed, hr.Failed, hr.WallSec, hr.PerSec, hr.P50ms, hr.P90ms, hr.P99ms, hr.Maxms, hr.Meanms, hr.HostP50ms, hr.HostP99ms)
		fmt.Printf("#   %s; per instance: durabox CPU %.2f ms, bench CPU %.2f ms\n", hr.CPU,
			1000*hr.CPU.ServerCPUSec/float64(max(hr.Completed, 1)), 1000*hr.CPU.BenchCPUSec/float64(max(hr.Completed, 1)))
		if !hr.ended() {
			failed = true
		} else {
			report("hello_throughput", hr.PerSec, "workflows/s")
			report("hello_loaded_latency_p50", hr.P50ms, "ms")
			report("hello_loaded_latency_p99", hr.P99ms, "ms")
			hr.Store.report("hello", "workflow", float64(hr.Completed))
		}
		out["hello"] = hr
	}
	if *fan > 0 {
		r := b.runSingle(prefix, "FanOut", *fan, *singleTO)
		fmt.Printf("# FanOut(%d): wall=%.3fs host-recorded=%.3fs result=%d expected=%d ok=%v %s\n", r.N, r.WallSec, r.HostSec, r.Result, r.Expected, r.OK, r.Err)
		fmt.Printf("#   %s\n", r.CPU)
		fmt.Printf("#   %s\n", r.Store.line(r.N, "activity"))
		if !r.OK {
			failed = true
		} else {
			report("fanout_total", r.WallSec, "s")
		}
		out["fanout"] = r
	}
	if *seq > 0 {
		r := b.runSingle(prefix, "Sequential", *seq, *singleTO)
		fmt.Printf("# Sequential(%d): wall=%.3fs (%.2f ms/step) host-recorded=%.3fs result=%d expected=%d ok=%v %s\n", r.N, r.WallSec, r.WallSec*1000/float64(r.N), r.HostSec, r.Result, r.Expected, r.OK, r.Err)
		fmt.Printf("#   %s\n", r.CPU)
		fmt.Printf("#   %s\n", r.Store.line(r.N, "activity"))
		if !r.OK {
			failed = true
		} else {
			report("sequential_per_step", r.WallSec*1000/float64(r.N), "ms")
			report("sequential_total", r.WallSec, "s")
			r.Store.report("sequential", "step", float64(r.N))
		}
		out["sequential"] = r
	}

	// Nothing this run started may be left unfinished or have ended other
	// than Completed.
	{
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		page, err := b.c.List(ctx, client.ListRequest{Filter: client.Filter{IDPrefix: prefix, Statuses: []engine.Status{
			engine.StatusPending, engine.StatusRunning, engine.StatusFailed, engine.StatusCanceled, engine.StatusTerminated}}, Limit: 10})
		cancel()
		switch {
		case err != nil:
			fmt.Printf("# final check: list instances: %v\n", err)
			failed = true
		case len(page.Instances) > 0:
			fmt.Printf("# final check: %d+ instances not Completed, such as %s (%s)\n", len(page.Instances), page.Instances[0].ID, page.Instances[0].Status)
			failed = true
		default:
			fmt.Printf("# final check: no instance of this run is unfinished, failed, canceled or terminated\n")
		}
	}

	tstop := time.Now()
	if err := srv.stop(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Printf("# stop server: %v\n", err)
			failed = true
		} else {
			fmt.Printf("# durabox serve exited with %v after SIGTERM (see serve.log)\n", err)
			failed = true
		}
	} else {
		fmt.Printf("# durabox serve stopped (SIGTERM to pid %s) in %.2fs\n", serverPID, time.Since(tstop).Seconds())
	}
	if *jsonOut != "" {
		bs, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(*jsonOut, bs, 0o644); err != nil {
			log.Printf("write json: %v", err)
		}
	}
	if failed {
		fmt.Fprintln(os.Stderr, "dbxbench: a workload failed (see the # lines)")
		os.RemoveAll(tmp)
		os.Exit(1)
	}
}
