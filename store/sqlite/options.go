package sqlite

import (
	"fmt"
	"log/slog"

	"github.com/durabox/durabox/store"
)

// Durability says what a commit waits for.
type Durability string

const (
	// DurabilityFull (the default): a commit returns once it is on disk, so
	// neither a crash nor a power cut loses it. PRAGMA synchronous=FULL.
	DurabilityFull Durability = "full"
	// DurabilityNormal: a commit returns once it is written to the WAL file;
	// a crash of the process loses nothing, a power cut may lose the last
	// commits. PRAGMA synchronous=NORMAL.
	DurabilityNormal Durability = "normal"
)

// synchronous is the PRAGMA synchronous setting for d.
func (d Durability) synchronous() string {
	if d == DurabilityNormal {
		return "NORMAL"
	}
	return "FULL"
}

// Options configures Open. The zero value means defaults.
type Options struct {
	// Durability is what a commit waits for; zero means DurabilityFull.
	Durability Durability
	// Logger receives the store's logs (schema migrations); nil discards
	// them.
	Logger *slog.Logger
	// OnCommit, when set, is told of every write transaction the store
	// commits or fails to: how many writes it held and how long it took
	// (a host's metrics). It runs on the goroutine of the caller that
	// committed the batch, one commit at a time, between two commits, so it
	// must return at once. Nil means none.
	OnCommit func(store.CommitStats)
}

// validate fills in defaults and rejects values Open cannot use.
func (o *Options) validate() error {
	switch o.Durability {
	case "":
		o.Durability = DurabilityFull
	case DurabilityFull, DurabilityNormal:
	default:
		return fmt.Errorf("sqlite: durability %q is not one of %s, %s", o.Durability, DurabilityFull, DurabilityNormal)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
