package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// checkFile reads the file at path and its WAL as they lie on disk, before
// SQLite opens them, and returns what is damaged (see checkWAL), each in
// words; none when it found nothing. A database SQLite has already opened
// would apply its WAL, dropping what a damaged one holds past the damage,
// and would read the pages of a database cut short as if they were
// empty. frames is the number of frames in the WAL that SQLite would
// apply.
func checkFile(path string) (frames int, problems []string, err error) {
	frames, problem, err := checkWAL(path)
	if err != nil {
		return 0, nil, err
	}
	if problem != "" {
		problems = append(problems, problem)
	}
	// A checkpoint writes the first page, with the new size, before the
	// pages that grow the file, and a crash between them is mended from
	// the WAL: with frames to apply, the size is the WAL's to decide.
	if frames == 0 {
		short, err := cutShortFile(path)
		if err != nil {
			return 0, nil, err
		}
		if short != "" {
			problems = append(problems, short)
		}
	}
	return frames, problems, nil
}

// cutShortFile returns a problem when the database file is shorter than
// its header says (https://sqlite.org/fileformat.html#in_header_database_size):
// it was cut short, and SQLite would read its missing pages as if empty.
func cutShortFile(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer f.Close()
	var hdr [100]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return "", nil // a new file, or not a database: checkHeader and SQLite say
	}
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("sqlite: read %s: %w", path, err)
	}
	be := binary.BigEndian
	pageSize := int64(be.Uint16(hdr[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(be.Uint32(hdr[28:]))
	// The size in the header is valid when its change counter and its
	// version-valid-for number agree.
	if pages == 0 || be.Uint32(hdr[24:]) != be.Uint32(hdr[92:]) || fi.Size() >= pages*pageSize {
		return "", nil
	}
	return fmt.Sprintf("the file is %d bytes, but its header says it holds %d pages of %d bytes (%d bytes): it was cut short, and its last pages are lost; restore it from a backup",
		fi.Size(), pages, pageSize, pages*pageSize), nil
}

// damagedIf is damaged, or nil without problems.
func damagedIf(path string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return damaged(path, problems)
}

// damaged is the error of Open on a damaged database: what is wrong, and
// what to do.
func damaged(path string, problems []string) error {
	return fmt.Errorf("sqlite: %s is damaged: %s. Durabox will not serve from a damaged database: run durabox check-db --db %s for everything wrong with it, "+
		"and restore it from a backup (durabox restore; see docs/operator.md)", path, strings.Join(problems, "; and "), path)
}

// quickCheck runs SQLite's quick_check on the write connection, and
// returns the damage it found, at most 10 lines of it.
func (s *Store) quickCheck(path string) error {
	problems, err := pragmaLines(context.Background(), s.db, `PRAGMA quick_check(10)`)
	if err != nil {
		return damaged(path, []string{fmt.Sprintf("SQLite's quick_check failed: %v", err)})
	}
	if len(problems) > 0 {
		return damaged(path, []string{"SQLite's quick_check found " + strings.Join(problems, "; ")})
	}
	return nil
}

// pragmaLines runs an integrity_check or quick_check and returns its
// lines, none when it answers "ok" (SQLite's "*** in database main ***",
// which heads them, left out).
func pragmaLines(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, pragma string) ([]string, error) {
	rows, err := q.QueryContext(ctx, pragma)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		for l := range strings.SplitSeq(line, "\n") {
			if l != "ok" && l != "*** in database main ***" && l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines, rows.Err()
}

// Check checks the Durabox database at path and reports what it found,
// changing nothing: the file and its WAL as they lie on disk (what Open
// refuses), SQLite's integrity_check and foreign_key_check, and the
// store's invariants (sqlstore.CheckInvariants), on a database of this
// durabox's schema version. It takes the file's lock while it checks, so
// that no host starts on it meanwhile; when a host holds the file, it
// checks what SQLite reads through the host's WAL, one commit of it, and
// says that it did not read the WAL itself. It returns an error only when
// it could not check: a file that is not there, or cannot be read.
func Check(ctx context.Context, path string) (*store.Check, error) {
	c := &store.Check{}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := checkHeader(path); err != nil {
		c.Problem("%s", strings.TrimPrefix(err.Error(), "sqlite: "+path+" "))
		return c, nil
	}
	lock, err := lockFile(path)
	var inUse *InUseError
	switch {
	case errors.As(err, &inUse):
		c.Did("the file is in use by a host (pid %s): its WAL, which the host is writing, was not read apart from what SQLite reads", inUse.PID)
	case err != nil:
		return nil, err
	default:
		defer unlockFile(lock)
		frames, problems, err := checkFile(path)
		if err != nil {
			return nil, err
		}
		c.Did("the file's header and its WAL (%d frames to apply)", frames)
		for _, p := range problems {
			c.Problem("%s", p)
		}
		if len(problems) > 0 {
			// Opening it would apply the WAL as SQLite does, dropping what
			// follows the damage: leave it as it is.
			return c, nil
		}
	}
	register()
	db, err := sql.Open(driverName, dsn(path, DurabilityFull, true)+"&mode=ro")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer conn.Close()
	// One read transaction: every check sees the same commit.
	if _, err := conn.ExecContext(ctx, sqlBegin); err != nil {
		return nil, fmt.Errorf("sqlite: read %s: %w", path, err)
	}
	defer conn.ExecContext(ctx, sqlRollback)
	var appID, version int
	err = conn.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID)
	if err == nil {
		err = conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version)
	}
	if err != nil {
		c.Problem("SQLite cannot read its schema: %v", err)
		return c, nil
	}
	switch {
	case appID != applicationID:
		c.Problem("it is a SQLite database but not a Durabox one (its application_id is %d)", appID)
		return c, nil
	case version > schemaVersion:
		c.Problem("it has schema version %d, newer than this durabox understands (%d); check it with the durabox that wrote it", version, schemaVersion)
		return c, nil
	}
	c.Did("the schema's version, %d", version)
	problems, err := pragmaLines(ctx, conn, `PRAGMA integrity_check`)
	if err != nil {
		c.Problem("SQLite's integrity_check failed: %v", err)
		return c, nil
	}
	c.Did("SQLite's integrity_check")
	for _, p := range problems {
		c.Problem("integrity_check: %s", p)
	}
	if err := foreignKeys(ctx, conn, c); err != nil {
		c.Problem("SQLite's foreign_key_check failed: %v", err)
		return c, nil
	}
	if version < schemaVersion {
		c.Did("not the store's invariants, which this durabox checks on its schema version (%d) only: durabox serve migrates the file to it when it opens it", schemaVersion)
		return c, nil
	}
	if err := sqlstore.CheckInvariants(ctx, sqlDB{conn}, c); err != nil {
		c.Problem("the store's invariants could not be read: %v", err)
	}
	return c, nil
}

// foreignKeys runs SQLite's foreign_key_check.
func foreignKeys(ctx context.Context, conn *sql.Conn, c *store.Check) error {
	rows, err := conn.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		c.Problem("foreign_key_check: row %d of %s names a row of %s that does not exist", rowid.Int64, table, parent)
	}
	c.Did("SQLite's foreign_key_check")
	return rows.Err()
}
