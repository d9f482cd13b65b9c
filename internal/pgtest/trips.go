package pgtest

import (
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Trips counts the round trips of the connections made through it: a
// proxy between the clients and the server of a URL. A round trip is a
// client's turn to send after the server has answered: however many
// statements a client sends before it waits (a batch, a pipeline), they
// are one.
type Trips struct {
	n atomic.Int64
}

// CountTrips starts a proxy to the server u names, for the rest of t,
// and returns a URL like u that connects through it, and its count.
func CountTrips(t testing.TB, u string) (string, *Trips) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	network, address := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if filepath.IsAbs(cfg.Host) {
		network, address = "unix", filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	// A socket in a directory of its own, with a short path (a socket's
	// path has at most 107 bytes).
	dir, err := os.MkdirTemp("", "pgtrips")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	trips := &Trips{}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		os.RemoveAll(dir)
	})
	wg.Go(func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { trips.relay(client, network, address) })
		}
	})
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	q.Set("host", dir)
	q.Set("port", "5432")
	p.Host, p.RawQuery = "", q.Encode()
	return p.String(), trips
}

// N returns the round trips counted so far.
func (tr *Trips) N() int64 { return tr.n.Load() }

// relay copies between client and the server at address until either
// ends, counting the client's turns.
func (tr *Trips) relay(client net.Conn, network, address string) {
	defer client.Close()
	server, err := net.Dial(network, address)
	if err != nil {
		return
	}
	defer server.Close()
	var mu sync.Mutex
	answered := true // the client speaks first
	done := make(chan struct{}, 2)
	go func() {
		turns(server, client, func() {
			mu.Lock()
			defer mu.Unlock()
			if answered {
				tr.n.Add(1)
			}
			answered = false
		})
		done <- struct{}{}
	}()
	go func() {
		turns(client, server, func() {
			mu.Lock()
			defer mu.Unlock()
			answered = true
		})
		done <- struct{}{}
	}()
	<-done
	client.Close()
	server.Close()
	<-done
}

// turns copies from src to dst, calling sent before each chunk it
// forwards, until either fails.
func turns(dst io.Writer, src io.Reader, sent func()) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			sent()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
