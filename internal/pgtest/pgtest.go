// Package pgtest finds a PostgreSQL server for tests (and for make
// crashtest-pg) and gives each test a database schema of its own, so that
// packages testing in parallel never collide.
//
// It looks, in order, for: the server $DURABOX_POSTGRES_URL names; a
// server on 127.0.0.1:5432 that lets user postgres in without a password
// (trust); a throwaway cluster it starts itself with the system's initdb
// and pg_ctl in a temporary directory (as user postgres when the tests run
// as root, which initdb refuses), stopped by Main. When none is there, a
// test that asks for one skips saying how to get one, unless
// $DURABOX_REQUIRE_POSTGRES is set (.ci/run sets it): then it fails.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.Schema(t) // a fresh, empty schema, dropped when t ends
//		...
//	}
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables pgtest reads.
const (
	// EnvURL names the server to use.
	EnvURL = "DURABOX_POSTGRES_URL"
	// EnvRequire, when set, makes a test that finds no server fail.
	EnvRequire = "DURABOX_REQUIRE_POSTGRES"
)

// local is the server on this machine's usual port.
const local = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	once    sync.Once
	found   string // the server's URL, or empty
	which   string // how it was found
	why     error  // why none was found
	cluster *throwaway
)

// find looks for a server, once per test process.
func find() {
	once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			found, which, why = u, "$"+EnvURL, reachable(u)
			if why != nil {
				found = ""
			}
			return
		}
		if reachable(local) == nil {
			found, which = local, "the server on 127.0.0.1:5432"
			return
		}
		c, err := startThrowaway(ClusterOptions{})
		if err != nil {
			why = fmt.Errorf("no server at $%s or on 127.0.0.1:5432, and no throwaway cluster: %w", EnvURL, err)
			return
		}
		cluster, found, which = c, c.url, "a throwaway cluster in "+c.dir
	})
}

// reachable connects to the server u names.
func reachable(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// Main runs the tests and then stops the throwaway cluster, if one was
// started. Use it as TestMain's exit code.
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Find returns the URL of the server to use and how it was found, or why
// there is none. A command that calls it must call Stop before it exits.
func Find() (url, how string, err error) {
	find()
	if found == "" {
		return "", "", why
	}
	return found, which, nil
}

// Stop stops the throwaway cluster, if Find started one.
func Stop() {
	if cluster != nil {
		cluster.stop()
		cluster = nil
	}
}

// Server returns the URL of the server the tests use and how it was
// found, or skips t (fails it when $DURABOX_REQUIRE_POSTGRES is set).
func Server(t testing.TB) (string, string) {
	t.Helper()
	find()
	if found == "" {
		msg := fmt.Sprintf("no PostgreSQL server: %v. Set %s=postgres://user@host:port/database, or install PostgreSQL (apt-get install postgresql)", why, EnvURL)
		if os.Getenv(EnvRequire) != "" {
			t.Fatal(msg + " (" + EnvRequire + " is set, so this fails rather than skips)")
		}
		t.Skip(msg)
	}
	return found, which
}

// Schema creates a schema of its own for t in the server's database and
// returns a URL whose search_path is it; it is dropped when t ends.
func Schema(t testing.TB) string {
	t.Helper()
	base, _ := Server(t)
	u, drop, err := NewSchema(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return u
}

// NewSchema creates a schema with a new name in the database base names
// and returns a URL whose search_path is it, and a function that drops it.
func NewSchema(base string) (string, func() error, error) {
	var b [6]byte
	rand.Read(b[:])
	name := "durabox_test_" + hex.EncodeToString(b[:])
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(`CREATE SCHEMA ` + name); err != nil {
		return "", nil, fmt.Errorf("pgtest: create schema %s: %w", name, err)
	}
	drop := func() error {
		if err := exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			return fmt.Errorf("pgtest: drop schema %s: %w", name, err)
		}
		return nil
	}
	return WithSearchPath(base, name), drop, nil
}

// WithSearchPath returns the URL u with its search_path set to schema.
func WithSearchPath(u, schema string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	q.Set("search_path", schema)
	p.RawQuery = q.Encode()
	return p.String()
}

// throwaway is a cluster started for the tests.
type throwaway struct {
	dir, url string
	port     int
	pgCtl    string
	// opts are the server's options, for every start.
	opts string
	cred *syscall.Credential
}

// Cluster is a throwaway PostgreSQL cluster of a test's own, for what a
// shared server must not undergo (a restart).
type Cluster struct{ c *throwaway }

// NewCluster starts a cluster of t's own with the system's initdb and
// pg_ctl, stopped when t ends, or skips t (fails it when
// $DURABOX_REQUIRE_POSTGRES is set) when it cannot.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := StartCluster(ClusterOptions{})
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			t.Fatal(err.Error() + " (" + EnvRequire + " is set, so this fails rather than skips)")
		}
		t.Skip(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// ClusterOptions are how StartCluster starts a cluster. The zero value
// listens on a socket in the cluster's directory only.
type ClusterOptions struct {
	// Listen is a comma-separated list of addresses to listen on over TCP
	// as well (PostgreSQL's listen_addresses), and Trust the network
	// (CIDR) whose connections it lets in without a password.
	Listen, Trust string
}

// StartCluster starts a cluster of the caller's own, as NewCluster does,
// for a command (make dbrestarttest, make partitiontest); the caller must
// Stop it.
func StartCluster(opts ClusterOptions) (*Cluster, error) {
	c, err := startThrowaway(opts)
	if err != nil {
		return nil, fmt.Errorf("no throwaway PostgreSQL cluster: %w. Install PostgreSQL (apt-get install postgresql) with initdb and pg_ctl on the PATH", err)
	}
	return &Cluster{c}, nil
}

// Stop stops the cluster and removes its directory.
func (c *Cluster) Stop() { c.c.stop() }

// URL is the cluster's database, through its socket.
func (c *Cluster) URL() string { return c.c.url }

// Port is the port the cluster listens on, over TCP where
// ClusterOptions.Listen says, and in its socket's name.
func (c *Cluster) Port() int { return c.c.port }

// How a cluster goes down.
const (
	// Fast is pg_ctl's fast shutdown: connections are ended, and the
	// server checkpoints before it exits.
	Fast = "fast"
	// Immediate is pg_ctl's immediate shutdown: every process exits at
	// once, and the next start recovers from the WAL, as after a crash.
	Immediate = "immediate"
	// Kill sends SIGKILL to the postmaster: its backends find it gone
	// and exit, and the next start recovers from the WAL.
	Kill = "kill"
)

// Down stops the cluster the way how says (Fast, Immediate or Kill), and
// returns when it no longer accepts connections.
func (c *Cluster) Down(how string) error {
	data := filepath.Join(c.c.dir, "data")
	switch how {
	case Fast, Immediate:
		if out, err := c.c.run(c.c.pgCtl, "-D", data, "-m", how, "-w", "stop"); err != nil {
			return fmt.Errorf("pg_ctl stop -m %s: %w: %s", how, err, out)
		}
		return nil
	case Kill:
		pidFile, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
		if err != nil {
			return fmt.Errorf("kill the postmaster: %w", err)
		}
		first, _, _ := strings.Cut(string(pidFile), "\n")
		pid, err := strconv.Atoi(strings.TrimSpace(first))
		if err != nil {
			return fmt.Errorf("kill the postmaster: postmaster.pid starts with %q, not a process id", first)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("kill the postmaster (pid %d): %w", pid, err)
		}
		// Gone when signal 0 finds no such process (it is no child of
		// this one, so nothing here reaps it: init does).
		for syscall.Kill(pid, 0) == nil {
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}
	return fmt.Errorf("pgtest: Down(%q): want %q, %q or %q", how, Fast, Immediate, Kill)
}

// Up starts the cluster after Down and returns when it accepts
// connections. After a Kill, the start waits for the killed postmaster's
// backends to leave its shared memory (the server refuses to start while
// they hold it), for up to 30 seconds.
func (c *Cluster) Up() error {
	data := filepath.Join(c.c.dir, "data")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := c.c.run(c.c.pgCtl, "-D", data, "-o", c.c.opts, "-l", filepath.Join(c.c.dir, "log"), "-w", "start")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pg_ctl start: %w: %s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startThrowaway initialises a cluster in a temporary directory and starts
// it on a free port, listening on a socket in that directory, and over
// TCP as opts say.
func startThrowaway(opts ClusterOptions) (*throwaway, error) {
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return nil, fmt.Errorf("initdb is not installed: %w", err)
	}
	pgCtl, err := exec.LookPath("pg_ctl")
	if err != nil {
		return nil, fmt.Errorf("pg_ctl is not installed: %w", err)
	}
	dir, err := os.MkdirTemp("", "durabox-pg-")
	if err != nil {
		return nil, err
	}
	c := &throwaway{dir: dir, pgCtl: pgCtl}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: run the cluster as postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, and there is no user postgres to run a cluster as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	if opts.Trust != "" {
		hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintf(hba, "host all all %s trust\n", opts.Trust)
		if err := errors.Join(err, hba.Close()); err != nil {
			return nil, fmt.Errorf("let %s into the cluster: %w", opts.Trust, err)
		}
	}
	// fsync=off: a killed server loses nothing that reached the kernel;
	// only a crash of the machine would, which no test here makes.
	c.port = port
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses='%s' -c fsync=off", port, dir, opts.Listen)
	if out, err := c.run(pgCtl, "-D", data, "-o", c.opts, "-l", filepath.Join(dir, "log"), "-w", "start"); err != nil {
		return nil, fmt.Errorf("pg_ctl start: %w: %s", err, out)
	}
	c.url = fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", url.QueryEscape(dir), port)
	if err := reachable(c.url); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// run runs a PostgreSQL program as the cluster's user.
func (c *throwaway) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// stop stops the cluster and removes its directory.
func (c *throwaway) stop() {
	c.run(c.pgCtl, "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	os.RemoveAll(c.dir)
}

// freePort returns a TCP port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
