package postgres

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/durabox/durabox/store"
)

// Options configures Open. The zero value means defaults.
type Options struct {
	// HostID names the host in the leases it takes; ReleaseAllLeases ends
	// this host's leases only, so a host that restarts takes its own work
	// back at once while the other hosts keep theirs. Empty means the
	// machine's host name and the process id.
	HostID string
	// MaxConns bounds the connections to the server; zero means 8.
	MaxConns int
	// ConnectTimeout bounds how long Open waits for the server to answer;
	// zero means 10 seconds.
	ConnectTimeout time.Duration
	// Logger receives the store's logs (schema migrations, reconnects);
	// nil discards them.
	Logger *slog.Logger
	// OnCommit, when set, is told of every write transaction the store
	// commits or fails to (a host's metrics). It runs on the goroutine
	// that wrote, so it must return at once. Nil means none.
	OnCommit func(store.CommitStats)
}

// validate fills in defaults and rejects values Open cannot use.
func (o *Options) validate() error {
	if o.MaxConns < 0 {
		return fmt.Errorf("postgres: MaxConns is %d; it must be 0 (the default, 8) or more", o.MaxConns)
	}
	if o.MaxConns == 0 {
		o.MaxConns = 8
	}
	if o.ConnectTimeout < 0 {
		return fmt.Errorf("postgres: ConnectTimeout is %s; it must be 0 (the default, 10s) or more", o.ConnectTimeout)
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.HostID == "" {
		name, _ := os.Hostname()
		o.HostID = fmt.Sprintf("%s:%d", name, os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
