package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/store/sqlite"
)

var backupCommand = &command{
	name:     "backup",
	synopsis: "--db FILE -o COPY",
	summary:  "copy a SQLite database, consistently, while a host serves it",
	about: "Copy the SQLite database FILE to the new file COPY with SQLite's online backup:\n" +
		"the copy is the database as one commit left it, while a host goes on serving\n" +
		"FILE (its commits do not wait for the copy). Without a host, a damaged FILE is\n" +
		"refused, as serve refuses it. COPY is written whole before it gets its name,\n" +
		"readable by its owner only. durabox restore puts a copy back; on PostgreSQL,\n" +
		"pg_dump takes a backup (docs/operator.md, \"Backups\").",
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		db := fs.String("db", "", "the SQLite `FILE` to copy (required)")
		out := fs.String("o", "", "write the copy to `COPY`, a file that must not exist (required)")
		return func(ctx context.Context, e *env) error {
			switch {
			case *db == "" || *out == "":
				return usagef("--db FILE and -o COPY are required")
			case isPostgres(*db):
				return usagef("backup copies a SQLite file; back up a PostgreSQL database with pg_dump (docs/operator.md, \"Backups\")")
			}
			stats, err := sqlite.Backup(ctx, *db, *out)
			if err != nil {
				return fmt.Errorf("durabox backup: %w", err)
			}
			_, err = fmt.Fprintf(e.stdout, "backed up %s to %s: %d pages, %s, in %s\n", *db, *out, stats.Pages, mib(stats.Bytes), stats.Took.Round(time.Millisecond))
			return err
		}
	},
}

var restoreCommand = &command{
	name:     "restore",
	synopsis: "--from COPY --db FILE",
	summary:  "put a backup in place of a SQLite database",
	about: "Put the backup COPY in place of the SQLite database FILE, for a host to serve.\n" +
		"It refuses while a host serves FILE (stop it first), and refuses a COPY that\n" +
		"durabox check-db finds a problem in. A database already at FILE is not\n" +
		"removed: it becomes FILE.replaced (its WAL with it), to remove once the\n" +
		"restored one serves as it should. The restore drill: docs/operator.md.",
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		from := fs.String("from", "", "the backup `COPY` (required)")
		db := fs.String("db", "", "the SQLite `FILE` to restore it to (required)")
		return func(ctx context.Context, e *env) error {
			switch {
			case *from == "" || *db == "":
				return usagef("--from COPY and --db FILE are required")
			case isPostgres(*db):
				return usagef("restore restores a SQLite file; restore a PostgreSQL database with pg_restore (docs/operator.md, \"Backups\")")
			}
			replaced, err := sqlite.Restore(ctx, *from, *db)
			if err != nil {
				return fmt.Errorf("durabox restore: %w", err)
			}
			if replaced != "" {
				_, err = fmt.Fprintf(e.stdout, "restored %s to %s; the database it replaced is %s (remove it once the restored one serves as it should)\n", *from, *db, replaced)
			} else {
				_, err = fmt.Fprintf(e.stdout, "restored %s to %s\n", *from, *db)
			}
			return err
		}
	},
}

// isPostgres reports whether db is a PostgreSQL URL rather than a file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// mib shows a size in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
