package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

var checkDBCommand = &command{
	name:     "check-db",
	synopsis: "--db FILE|URL [--json]",
	summary:  "check a database for damage, changing nothing",
	about: "Check the SQLite file FILE, or the PostgreSQL database of a postgres:// URL,\n" +
		"for damage, reading only, and print what was checked and each problem found;\n" +
		"exit 1 when there is one. On SQLite: the file's header and its WAL as they lie\n" +
		"on disk (what serve refuses to start on), SQLite's integrity_check and\n" +
		"foreign_key_check, and the store's invariants: every row belongs to an\n" +
		"instance that exists, every history runs from event 1 without gaps, starts,\n" +
		"ends at most once, and each completion names its schedule, every event and\n" +
		"message decodes. On PostgreSQL, the schema's version and the invariants\n" +
		"(pg_amcheck checks the pages: docs/operator.md). It may run while a host\n" +
		"serves the database: it then reads one commit of it, and on SQLite not the WAL\n" +
		"the host is writing. What to do about a problem: docs/operator.md.",
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		c := &serveConfig{}
		fs.StringVar(&c.db, "db", "", "the SQLite `FILE`, or a postgres:// URL (required)")
		asJSON := fs.Bool("json", false, "print JSON, for scripts")
		return func(ctx context.Context, e *env) error {
			if c.db == "" {
				return usagef("--db is required: the SQLite file, or a postgres:// URL")
			}
			var check *store.Check
			var err error
			if c.postgres() {
				check, err = postgres.Check(ctx, c.db)
			} else {
				check, err = sqlite.Check(ctx, c.db)
			}
			if err != nil {
				return fmt.Errorf("durabox check-db: %w", err)
			}
			if *asJSON {
				err = printJSON(e.stdout, checkDBJSON{Checked: check.Ran, Problems: append([]string{}, check.Problems...)})
			} else {
				err = printCheck(e, c.dbName(), check)
			}
			if err == nil && len(check.Problems) > 0 {
				return exitError{code: 1}
			}
			return err
		}
	},
}

// checkDBJSON is check-db's output with --json.
type checkDBJSON struct {
	Checked  []string `json:"checked"`
	Problems []string `json:"problems"`
}

func printCheck(e *env, db string, c *store.Check) error {
	for _, r := range c.Ran {
		fmt.Fprintf(e.stdout, "checked  %s\n", r)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(e.stdout, "problem  %s\n", p)
	}
	if len(c.Problems) == 0 {
		_, err := fmt.Fprintf(e.stdout, "%s: no problems found\n", db)
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "%s: problems found: %d; what to do about them: docs/operator.md, \"A damaged database\"\n", db, len(c.Problems))
	return err
}
