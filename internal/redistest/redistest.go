// Package redistest finds a Redis server for tests, as package pgtest
// finds PostgreSQL: the one $DURABOX_REDIS_ADDR names; one on
// 127.0.0.1:6379; or one it starts itself from redis-server on the PATH,
// keeping nothing on disk, stopped by Main. When none is there, a test
// that asks for one skips saying how to get one, unless
// $DURABOX_REQUIRE_REDIS is set (.ci/run sets it): then it fails.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The environment variables redistest reads.
const (
	EnvAddr    = "DURABOX_REDIS_ADDR"
	EnvRequire = "DURABOX_REQUIRE_REDIS"
)

var (
	once    sync.Once
	found   string
	why     error
	started *exec.Cmd
)

// Main runs the tests, then stops the server Addr started, if any.
func Main(m *testing.M) int {
	code := m.Run()
	if started != nil {
		started.Process.Kill()
		started.Wait()
	}
	return code
}

// Addr returns the address (host:port) of the Redis server the tests use,
// or skips t (fails it when $DURABOX_REQUIRE_REDIS is set).
func Addr(t testing.TB) string {
	t.Helper()
	once.Do(find)
	if found == "" {
		msg := fmt.Sprintf("no Redis server: %v. Set %s=host:port, or install Redis (apt-get install redis-server)", why, EnvAddr)
		if os.Getenv(EnvRequire) != "" {
			t.Fatal(msg + " (" + EnvRequire + " is set, so this fails rather than skips)")
		}
		t.Skip(msg)
	}
	return found
}

func find() {
	for _, addr := range []string{os.Getenv(EnvAddr), "127.0.0.1:6379"} {
		if addr == "" {
			continue
		}
		if why = ping(addr); why == nil {
			found = addr
			return
		}
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		why = fmt.Errorf("none answers on 127.0.0.1:6379, and redis-server is not on the PATH")
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		why = err
		return
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		why = fmt.Errorf("start %s: %w", bin, err)
		return
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if why = ping(addr); why == nil {
			found, started = addr, cmd
			return
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	why = fmt.Errorf("the redis-server it started on port %d did not answer: %w", port, why)
}

// ping sends PING to addr and reads PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("%s answered PING with %q", addr, strings.TrimSpace(line))
	}
	return nil
}
