package torture

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
)

// Config is one run. The zero value means every default.
type Config struct {
	// Kills is how many times to kill the host. Zero means 24.
	Kills int
	// Scale is how many instances of each of the 8 kinds to start, not
	// counting the children they start. Zero means 16.
	Scale int
	// Seed seeds the kill times. Zero means one from the clock; the run
	// prints it either way.
	Seed uint64
	// MinUp and MaxUp bound how long each host serves before it is killed.
	// Zero means 50ms and 700ms.
	MinUp, MaxUp time.Duration
	// Deadline bounds the wait, after the last kill, for every instance to
	// finish. Zero means 3m.
	Deadline time.Duration
	// Bin is the durabox binary to run. Empty means build one.
	Bin string
	// Durability is the host's --durability: "full" or "normal" (a kill
	// must lose nothing in either). Empty means full.
	Durability string
	// Keep keeps the database and the host's log even when nothing was
	// lost (they are kept anyway when something was).
	Keep bool
	// Postgres, when set, is the URL of an empty PostgreSQL database (or
	// schema) the hosts share, instead of a SQLite file.
	Postgres string
	// Hosts is how many hosts serve at once, each on its own address;
	// more than one needs Postgres. Zero means 1. A kill kills one of them,
	// sometimes two at once, and each is started again at once; the
	// clients talk to any of them.
	Hosts int
	// Workers, when not zero, is how many worker processes outside the
	// hosts run every activity of the workload (crashworker, on the task
	// queue the hosts send them to with --activity-queue); a kill then
	// sometimes kills a worker instead of a host. Zero runs the
	// activities in their modules.
	Workers int
	// DB, when set, is the PostgreSQL cluster of the run's own that
	// Postgres names, and DBRestarts how many times the run takes it down
	// mid-run (in turn: a fast shutdown, an immediate one, and SIGKILL to
	// its postmaster), for up to 1.5 seconds each, spread over the kills.
	// While it is down, every host must answer 503 on /readyz and stay up.
	DB         *pgtest.Cluster
	DBRestarts int
	// Net, when set, runs each host in a network namespace of its own
	// (NewNetlab), reaching DB over TCP, and Partitions is how many times
	// the run cuts one host off (from its database, both ways or one way,
	// or from everything) or slows its link to the database, for 1 to 15
	// seconds, spread over the kills. A
	// host cut off must not exit, and must serve again once its links are
	// back.
	Net        *Netlab
	Partitions int
	// links are the hosts' ways to DB when Net is set, which a partition
	// makes slow.
	links []*slowLink
	// Out receives the run's progress and violations. Nil discards them.
	Out io.Writer
}

func (c *Config) validate() error {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"Kills", &c.Kills, 24}, {"Scale", &c.Scale, 16}} {
		if *f.v < 0 {
			return fmt.Errorf("torture: %s is %d; it must be zero (for the default, %d) or more", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.MinUp, 50 * time.Millisecond}, {&c.MaxUp, 700 * time.Millisecond}, {&c.Deadline, 3 * time.Minute}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.MinUp < 0 || c.MaxUp < c.MinUp || c.Deadline < 0 {
		return fmt.Errorf("torture: the host must serve between MinUp (%s) and MaxUp (%s), 0 <= MinUp <= MaxUp, and Deadline (%s) must not be negative", c.MinUp, c.MaxUp, c.Deadline)
	}
	switch c.Durability {
	case "":
		c.Durability = "full"
	case "full", "normal":
	default:
		return fmt.Errorf("torture: Durability is %q; it must be full or normal", c.Durability)
	}
	switch {
	case c.Hosts < 0:
		return fmt.Errorf("torture: Hosts is %d; it must be zero (for one) or more", c.Hosts)
	case c.Hosts == 0:
		c.Hosts = 1
	case c.Hosts > 1 && c.Postgres == "":
		return fmt.Errorf("torture: %d hosts need a PostgreSQL database to share (Postgres); a SQLite file has one host", c.Hosts)
	}
	switch {
	case c.DBRestarts < 0:
		return fmt.Errorf("torture: DBRestarts is %d; it must be zero or more", c.DBRestarts)
	case c.DBRestarts > 0 && c.DB == nil:
		return fmt.Errorf("torture: %d database restarts need a PostgreSQL cluster of the run's own (DB)", c.DBRestarts)
	case c.Partitions < 0:
		return fmt.Errorf("torture: Partitions is %d; it must be zero or more", c.Partitions)
	case (c.Partitions > 0 || c.Net != nil) && (c.Net == nil || c.DB == nil):
		return fmt.Errorf("torture: partitions need the hosts in network namespaces (Net) and a PostgreSQL cluster of the run's own (DB) listening on their links")
	}
	if c.Workers < 0 {
		return fmt.Errorf("torture: Workers is %d; it must be zero (activities in their modules) or more", c.Workers)
	}
	if c.Postgres != "" && c.Durability != "full" {
		return fmt.Errorf("torture: Durability is for a SQLite file; on PostgreSQL the server decides")
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	return nil
}

// Report is the outcome of a run.
type Report struct {
	Seed  uint64
	Kills int
	// Instances and Events count every instance the host had at the end,
	// children included, and the events of all their histories.
	Instances, Events int
	// Raised counts the Approval events the host acknowledged; Taken
	// those that appear in a history. The others were dropped by the
	// rules (raised before the wait, after it was taken, or after the
	// end).
	Raised, Taken int
	// Marks counts the tally module's activities, which print a line each
	// time they run; Rerun those of them that ran more than once.
	Marks, Rerun int
	// Redelivered counts the activities of every module that the host's
	// log says it delivered more than once (by instance and schedule id,
	// so the executions of a continued-as-new instance count as one).
	Redelivered int
	// Updates counts the updates a history answered as the driver was
	// answered; Queries the queries answered between them.
	Updates, Queries int
	// Retries counts client requests repeated because no host answered, or
	// one answered 503.
	Retries int64
	// Postgres says the hosts shared a PostgreSQL database, Hosts how many
	// served at once, Doubles how many times two were killed at once, and
	// Cuts how many times the server ended a host's connections
	// (pg_terminate_backend).
	Postgres             bool
	Hosts, Doubles, Cuts int
	// Workers is how many worker processes ran the activities, and
	// WorkerKills how many times one was killed.
	Workers, WorkerKills int
	// DBRestarts counts the times the database went down (DBDown by
	// how), and NotReady the answers of 503 on /readyz while it was down
	// or a host was cut off from it, of ReadyAsked.
	DBRestarts           int
	DBDown               map[string]int
	NotReady, ReadyAsked int
	// Partitions counts the times a host was cut off, Heals those after
	// which it served again, and LongestCut is the longest.
	Partitions, Heals int
	LongestCut        time.Duration
	// Violations lists everything lost or wrong; empty when nothing was.
	Violations []string
	// Took is how long the run took.
	Took time.Duration
}

// Summary is the run's one-line outcome.
func (r *Report) Summary() string {
	var where string
	if r.Postgres {
		where = fmt.Sprintf("postgres, %d hosts, %d times two at once, %d connections cut, ", r.Hosts, r.Doubles, r.Cuts)
	}
	if r.Workers > 0 {
		where += fmt.Sprintf("%d external workers, %d worker kills, ", r.Workers, r.WorkerKills)
	}
	if r.Partitions > 0 {
		where += fmt.Sprintf("%d partitions (the longest %s; not ready %d of %d times asked while cut off from the database), %d heals, ",
			r.Partitions, r.LongestCut.Round(100*time.Millisecond), r.NotReady, r.ReadyAsked, r.Heals)
	}
	if r.DBRestarts > 0 {
		where += fmt.Sprintf("%d database restarts (%d fast, %d immediate, %d killed; not ready %d of %d times asked while down), ",
			r.DBRestarts, r.DBDown[pgtest.Fast], r.DBDown[pgtest.Immediate], r.DBDown[pgtest.Kill], r.NotReady, r.ReadyAsked)
	}
	return fmt.Sprintf("crashtest: %s%d kills, %d instances, %d events, %d of %d counted activities ran more than once, lost %d",
		where, r.Kills, r.Instances, r.Events, r.Rerun, r.Marks, len(r.Violations))
}

// Run builds durabox (unless c.Bin names one) and the workload's modules,
// runs the workload through c.Kills kills of the host, lets the last host
// finish every instance, and checks the outcome. An error means the run
// could not be carried out; what it found is in the Report.
func Run(c Config) (r *Report, err error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(c.Out, "crashtest: seed %d (replay the kill times with --seed %d)\n", c.Seed, c.Seed)
	dir, err := os.MkdirTemp("", "durabox-crashtest-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err == nil && len(r.Violations) == 0 && !c.Keep {
			os.RemoveAll(dir)
			return
		}
		fmt.Fprintf(c.Out, "crashtest: the database and the host's log are kept in %s\n", dir)
	}()
	bin, wasm, err := build(c.Bin, dir)
	if err != nil {
		return nil, err
	}
	var workerBin string
	if c.Workers > 0 {
		workerBin = filepath.Join(dir, "crashworker")
		cmd := exec.Command("go", "build", "-o", workerBin, "./internal/torture/cmd/crashworker")
		cmd.Dir = guestbuild.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build crashworker: %v\n%s", err, out)
		}
	}
	addrs := make([]string, c.Hosts)
	for i := range addrs {
		if c.Net != nil {
			addrs[i] = net.JoinHostPort(c.Net.HostIP(i), "7070") // its namespace is its own
		} else if addrs[i], err = freeAddr(); err != nil {
			return nil, err
		}
	}
	logPath := filepath.Join(dir, "host.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// Hosts in namespaces listen beyond loopback, which needs a token, and
	// reach the database through a link of their own.
	var token string
	if c.Net != nil {
		token = crand.Text()
		for i := range c.Hosts {
			l, err := newSlowLink(net.JoinHostPort(c.Net.DatabaseIP(i), "0"), net.JoinHostPort(c.Net.DatabaseIP(i), strconv.Itoa(c.DB.Port())))
			if err != nil {
				return nil, err
			}
			defer l.close()
			c.links = append(c.links, l)
		}
	}
	launch := func(i int) (*hostProc, error) {
		if c.Net != nil {
			name, args := c.Net.Command(i, "env", append([]string{"DURABOX_TOKEN=" + token, bin, "serve"}, c.serveArgs(dir, addrs[i], i)...)...)
			return startProc(name, args, log, serveReady)
		}
		return startHost(bin, c.serveArgs(dir, addrs[i], i), log)
	}

	// The clients talk to any host.
	anyHost := &http.Client{Timeout: 10 * time.Second, Transport: anyOf(addrs)}
	cl := client.New("http://"+addrs[0], &client.Options{HTTPClient: anyHost, Token: token})
	// Deploy on a host that is not killed: compiling the modules takes
	// seconds, and the kills are for the work.
	p, err := launch(0)
	if err != nil {
		return nil, err
	}
	// Compiling a module takes seconds, more on a busy machine: the deploys
	// get more time than the requests a kill may cut.
	deployer := client.New("http://"+addrs[0], &client.Options{HTTPClient: &http.Client{Timeout: 2 * time.Minute}, Token: token})
	for _, w := range wasm {
		if _, err := deployer.Deploy(context.Background(), w); err != nil {
			p.kill()
			return nil, fmt.Errorf("deploy: %w", err)
		}
	}
	p.stop()

	planned := plan(c.Scale)
	// Start instances on the first two thirds of the hosts, so that the
	// last kills find work in flight too.
	d := newDriver(cl, planned, max(1, 2*c.Kills/3))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	driven := make(chan struct{})
	go func() {
		d.drive(ctx)
		close(driven)
	}()
	rng := rand.New(rand.NewPCG(c.Seed, 0))
	r = &Report{Seed: c.Seed, Postgres: c.Postgres != "", Hosts: c.Hosts, Workers: c.Workers, DBDown: map[string]int{}}
	procs := make([]*hostProc, c.Hosts)
	workers := make([]*hostProc, c.Workers)
	defer func() {
		for _, p := range append(procs, workers...) {
			if p != nil {
				p.stop()
			}
		}
	}()
	startWorkers := func() error {
		for i, w := range workers {
			if w == nil {
				if workers[i], err = startProc(workerBin, []string{"--hosts", strings.Join(addrs, ",")}, log, "crashworker: polling"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for r.Kills < c.Kills {
		for i, p := range procs {
			if p == nil {
				if procs[i], err = launch(i); err != nil {
					return nil, fmt.Errorf("after %d kills: %w", r.Kills, err)
				}
			}
		}
		if err := startWorkers(); err != nil {
			return nil, fmt.Errorf("after %d kills: %w", r.Kills, err)
		}
		// The next batch starts at a random moment of the hosts' lives,
		// so that kills cut starts and raises short too.
		up := c.MinUp + time.Duration(rng.Int64N(int64(c.MaxUp-c.MinUp)+1))
		early := time.Duration(rng.Int64N(int64(up) + 1))
		time.Sleep(early)
		d.releaseNext()
		if c.Postgres != "" && (r.Cuts == 0 && r.Kills >= c.Kills/2 || rng.IntN(8) == 0) {
			// The server ends one host's connections mid-work.
			n, err := cutConnections(c.Postgres, hostID(rng.IntN(c.Hosts)))
			if err != nil {
				return nil, err
			}
			if n > 0 {
				r.Cuts++
			}
		}
		time.Sleep(up - early)
		if c.Workers > 0 && rng.IntN(2) == 0 {
			// A worker dies mid-attempt: its tasks go to another once
			// their leases end.
			i := rng.IntN(c.Workers)
			workers[i].kill()
			workers[i] = nil
			r.WorkerKills++
		}
		if r.Partitions < c.Partitions && r.Kills >= (r.Partitions+1)*c.Kills/(c.Partitions+1) {
			if err := partition(c.Net, c.links, addrs, procs, rng, r, d.fail); err != nil {
				return nil, fmt.Errorf("after %d kills: %w", r.Kills, err)
			}
		}
		if r.DBRestarts < c.DBRestarts && r.Kills >= (r.DBRestarts+1)*c.Kills/(c.DBRestarts+1) {
			if err := outage(c.DB, addrs, procs, rng, r, d.fail); err != nil {
				return nil, fmt.Errorf("after %d kills: %w", r.Kills, err)
			}
		}
		victims := []int{rng.IntN(c.Hosts)}
		if c.Hosts > 1 && rng.IntN(4) == 0 && r.Kills+2 <= c.Kills {
			// Sometimes two at once.
			victims = append(victims, (victims[0]+1+rng.IntN(c.Hosts-1))%c.Hosts)
			r.Doubles++
		}
		for _, i := range victims {
			procs[i].kill()
			procs[i] = nil
			r.Kills++
		}
	}
	if c.Postgres != "" && r.Cuts == 0 {
		if n, err := cutConnections(c.Postgres, hostID(0)); err != nil {
			return nil, err
		} else if n > 0 {
			r.Cuts++
		}
	}
	fmt.Fprintf(c.Out, "crashtest: %d kills in %s; the hosts now finish the work\n", r.Kills, time.Since(start).Round(time.Millisecond))
	for i, p := range procs {
		if p == nil {
			if procs[i], err = launch(i); err != nil {
				return nil, fmt.Errorf("after the last kill: %w", err)
			}
		}
	}
	if err := startWorkers(); err != nil {
		return nil, fmt.Errorf("after the last kill: %w", err)
	}
	d.releaseAll()
	// The partitions the kills left no time for (a host started again
	// after a kill is not cut until it is ready) come now, while the
	// last instances run.
	for deadline := time.Now().Add(3 * time.Minute); r.Partitions < c.Partitions; {
		if time.Now().After(deadline) {
			d.fail("partition: no host was ready to be cut off for 3 minutes after the last kill; %d of %d partitions made", r.Partitions, c.Partitions)
			break
		}
		before := r.Partitions
		if err := partition(c.Net, c.links, addrs, procs, rng, r, d.fail); err != nil {
			return nil, fmt.Errorf("after the last kill: %w", err)
		}
		if r.Partitions == before {
			time.Sleep(200 * time.Millisecond)
		}
	}
	finish, stopFinish := context.WithTimeout(ctx, c.Deadline)
	defer stopFinish()
	go func() {
		<-finish.Done()
		cancel() // the driver gives up too
	}()
	<-driven
	if err := finished(finish, cl, planned); err != nil {
		d.fail("not every instance finished within %s of the last kill: %v", c.Deadline, err)
	}
	hl, err := readHostLog(logPath)
	if err != nil {
		return nil, fmt.Errorf("read the host's log: %w", err)
	}
	f, err := check(context.Background(), cl, planned, d.raised, d.answers, hl.marks)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	r.Instances, r.Events, r.Raised, r.Taken, r.Marks, r.Rerun = f.instances, f.events, f.raised, f.taken, f.marks, f.rerun
	r.Updates, r.Queries = f.updates, d.queries
	r.Violations = append(d.failures, f.violations...)
	r.Retries, r.Redelivered = d.retries.Load(), hl.redelivered
	r.Took = time.Since(start)
	for _, v := range r.Violations {
		fmt.Fprintln(c.Out, "crashtest: LOST:", v)
	}
	fmt.Fprintf(c.Out, "crashtest: %d Approval events raised, %d taken, %d dropped by the rules; %d updates answered once each, as their histories say, and %d queries answered; %d client requests repeated; the host's log shows %d activities delivered more than once; %s\n",
		r.Raised, r.Taken, r.Raised-r.Taken, r.Updates, r.Queries, r.Retries, r.Redelivered, r.Took.Round(time.Millisecond))
	return r, nil
}

// build returns the durabox binary (bin, or one built in dir) and the
// workload's modules.
func build(bin, dir string) (string, [][]byte, error) {
	if bin == "" {
		bin = filepath.Join(dir, "durabox")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/durabox")
		cmd.Dir = guestbuild.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("build durabox: %v\n%s", err, out)
		}
	}
	var wasm [][]byte
	for _, m := range modules {
		w, err := guestbuild.Wasm(m)
		if err != nil {
			return "", nil, err
		}
		wasm = append(wasm, w)
	}
	return bin, wasm, nil
}

// serveArgs are the arguments of durabox serve for host i at addr.
func (c *Config) serveArgs(dir, addr string, i int) []string {
	var args []string
	if c.Postgres == "" {
		args = []string{"--db", filepath.Join(dir, "crash.db"), "--addr", addr, "--durability", c.Durability}
	} else {
		// A short lease, so that the work of a host that was killed and is
		// slow to come back, or whose connections were cut, moves on.
		db := c.Postgres
		if c.Net != nil {
			db = overTCP(c.Postgres, c.links[i].Addr())
		}
		args = []string{"--db", db, "--addr", addr, "--host-id", hostID(i), "--lease", "10s", "--cache-dir", filepath.Join(dir, "cache", hostID(i))}
	}
	if c.Workers > 0 {
		// Every activity to the workers, whose tasks, when one is killed,
		// go to another once a short lease ends.
		var routes []string
		for _, name := range workloadActivities {
			routes = append(routes, name+"=torture")
		}
		args = append(args, "--activity-queue", strings.Join(routes, ","))
		if c.Postgres == "" {
			args = append(args, "--lease", "10s")
		}
	}
	return args
}

// workloadActivities are the activities of the workload's modules, which
// crashworker serves in external-worker mode.
var workloadActivities = []string{"SayHello", "FlakyTask", "Dispatch", "Notify", "Count", "Beat", "PriceLine", "Charge", "Mark"}

// hostID is the --host-id of host i.
func hostID(i int) string { return fmt.Sprintf("crashtest-%d", i) }

// cutConnections ends the PostgreSQL connections of the host id, as
// pg_terminate_backend does when an operator or a failover does it, and
// returns how many it ended.
func cutConnections(url, id string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("connect to cut %s's connections: %w", id, err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, "durabox "+id).Scan(&n)
	return n, err
}

// anyOf is a transport that sends each request to one of addrs, in turn,
// as a load balancer in front of several hosts would.
func anyOf(addrs []string) http.RoundTripper {
	var next atomic.Uint64
	base := http.DefaultTransport
	return roundTrip(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.URL.Host = addrs[next.Add(1)%uint64(len(addrs))]
		req.Host = req.URL.Host
		return base.RoundTrip(req)
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// freeAddr returns a loopback address with a free port, for every host of
// the run to listen on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// finished waits until the host has every planned instance, and every
// instance it has has finished. (A child is created in the commit of the
// turn that starts it, so a finished parent's children are all there.)
func finished(ctx context.Context, c *client.Client, planned []*expect) error {
	for {
		all, err := listAll(ctx, c)
		var running []string
		have := map[string]bool{}
		for _, inst := range all {
			have[inst.ID] = true
			if !inst.Status.IsTerminal() {
				running = append(running, fmt.Sprintf("%s (%s)", inst.ID, inst.Status))
			}
		}
		for _, e := range planned {
			if !have[e.id] {
				running = append(running, e.id+" (not there)")
			}
		}
		if err == nil && len(running) == 0 {
			return nil
		}
		if sleep(ctx, 100*time.Millisecond) != nil {
			return errors.Join(err, fmt.Errorf("these have not finished: %s", strings.Join(running, ", ")))
		}
	}
}
