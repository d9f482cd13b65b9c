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

// OpenCheck says how much of an existing database Open checks before it
// uses it. Whatever it says, Open refuses a file that is not a Durabox
// database, one from a newer Durabox, a file shorter than its header says
// and a damaged WAL (the checks that cost nothing, or the WAL's size);
// durabox check-db checks everything.
type OpenCheck string

const (
	// OpenCheckQuick (the default) also runs SQLite's quick_check over the
	// whole file: every page of every table and index is read once, which
	// cost 3.1 to 3.6 s a GB from the page cache and 34 s a GB from a cold,
	// slow disk (RATIONALE, "Why does serve check the whole file when it
	// starts, and read the WAL itself?").
	OpenCheckQuick OpenCheck = "quick"
	// OpenCheckHeader checks no more than the header, the schema's version
	// and the WAL: damage in the pages is found when they are read, as an
	// error of the operation that reads them.
	OpenCheckHeader OpenCheck = "header"
)

// Options configures Open. The zero value means defaults.
type Options struct {
	// Durability is what a commit waits for; zero means DurabilityFull.
	Durability Durability
	// OpenCheck is how much of an existing database Open checks; zero
	// means OpenCheckQuick.
	OpenCheck OpenCheck
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
	switch o.OpenCheck {
	case "":
		o.OpenCheck = OpenCheckQuick
	case OpenCheckQuick, OpenCheckHeader:
	default:
		return fmt.Errorf("sqlite: open check %q is not one of %s, %s", o.OpenCheck, OpenCheckQuick, OpenCheckHeader)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
