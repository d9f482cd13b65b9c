package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// BackupStats is what Backup copied.
type BackupStats struct {
	// Pages is the number of pages copied, Bytes their size.
	Pages int
	Bytes int64
	// Took is how long the copy took.
	Took time.Duration
}

// Backup copies the Durabox database at path to dst, a file that must not
// exist, with SQLite's online backup API: the copy is the database as one
// commit left it, whether or not a host is serving it meanwhile (the copy
// runs in one read transaction, which a host's commits do not wait for).
// Without a host, it refuses a damaged file, as Open does. The copy is
// written beside dst and renamed to it once it is whole and on disk, so a
// backup that fails or is killed leaves no file at dst; like a database,
// it is readable by its owner only.
func Backup(ctx context.Context, path, dst string) (BackupStats, error) {
	began := time.Now()
	if _, err := os.Stat(dst); err == nil {
		return BackupStats{}, fmt.Errorf("sqlite: backup to %s: the file exists; name a new file, or remove it first", dst)
	}
	if err := checkSource(path); err != nil {
		return BackupStats{}, err
	}
	lock, err := lockFile(path)
	switch {
	case errors.As(err, new(*InUseError)):
		// A host serves it, and checked it when it opened it.
	case err != nil:
		return BackupStats{}, err
	default:
		defer unlockFile(lock)
		if _, problems, err := checkFile(path); err != nil || len(problems) > 0 {
			return BackupStats{}, errors.Join(err, damagedIf(path, problems))
		}
	}
	stats, err := copyInto(ctx, path, dst, dst+".part", nil)
	if err != nil {
		return BackupStats{}, fmt.Errorf("sqlite: backup %s to %s: %w", path, dst, err)
	}
	stats.Took = time.Since(began)
	return stats, nil
}

// copyInto copies the Durabox database at path to the new file tmp with
// the backup API, then calls replace, unless nil (Restore moves the old
// database aside there), and renames tmp to dst once it is on disk. It
// leaves no tmp behind.
func copyInto(ctx context.Context, path, dst, tmp string, replace func() error) (BackupStats, error) {
	register()
	src, err := sql.Open(driverName, dsn(path, DurabilityFull, true))
	if err != nil {
		return BackupStats{}, err
	}
	defer src.Close()
	if err := isDurabox(ctx, src, path); err != nil {
		return BackupStats{}, err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return BackupStats{}, err
	}
	f.Close()
	stats, err := copyDatabase(ctx, src, tmp)
	if err == nil && replace != nil {
		err = replace()
	}
	if err == nil {
		err = syncRename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(tmp + "-journal")
		return BackupStats{}, err
	}
	return stats, nil
}

// checkSource refuses a path that is not there, or not a SQLite file.
func checkSource(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return checkHeader(path)
}

// isDurabox refuses a database that is not a Durabox one.
func isDurabox(ctx context.Context, db *sql.DB, path string) error {
	var appID int
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return fmt.Errorf("sqlite: read %s: %w (is it a corrupt database? durabox check-db --db %s says)", path, err, path)
	}
	if appID != applicationID {
		return fmt.Errorf("sqlite: %s is a SQLite database but not a Durabox one", path)
	}
	return nil
}

// copyDatabase copies every page of src to the file dst with SQLite's
// backup API, in one step: one read transaction of src.
func copyDatabase(ctx context.Context, src *sql.DB, dst string) (BackupStats, error) {
	to, err := sql.Open(driverName, "file:"+(&url.URL{Path: dst}).EscapedPath())
	if err != nil {
		return BackupStats{}, err
	}
	defer to.Close()
	from, err := src.Conn(ctx)
	if err != nil {
		return BackupStats{}, err
	}
	defer from.Close()
	into, err := to.Conn(ctx)
	if err != nil {
		return BackupStats{}, err
	}
	defer into.Close()
	var stats BackupStats
	err = into.Raw(func(d any) error {
		return from.Raw(func(s any) error {
			b, err := d.(*conn).Backup("main", s.(*conn).SQLiteConn, "main")
			if err != nil {
				return err
			}
			done, err := b.Step(-1)
			stats.Pages = b.PageCount()
			if err == nil && !done {
				err = errors.New("the backup did not finish in one step")
			}
			return errors.Join(err, b.Finish())
		})
	})
	if err != nil {
		return BackupStats{}, err
	}
	var pageSize int64
	if err := into.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return BackupStats{}, err
	}
	stats.Bytes = int64(stats.Pages) * pageSize
	return stats, nil
}

// syncRename puts the file tmp on disk, renames it to name, and puts the
// rename on disk.
func syncRename(tmp, name string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// Restore puts the backup at from in place of the database at path: it
// refuses while a host holds path (stop it first), and refuses a backup
// that Check finds a problem in. A database already at path is not
// removed: it is renamed to path+".replaced" (its WAL with it, so that
// no WAL of the old database is ever applied to the restored one), which
// Restore returns; it refuses when that name is taken. The restored file
// is written beside path and renamed to it once whole and on disk.
func Restore(ctx context.Context, from, path string) (replaced string, err error) {
	c, err := Check(ctx, from)
	if err != nil {
		return "", fmt.Errorf("sqlite: restore from %s: %w", from, err)
	}
	if len(c.Problems) > 0 {
		return "", fmt.Errorf("sqlite: restore from %s: the backup is damaged: %s; restore from another backup", from, strings.Join(c.Problems, "; and "))
	}
	lock, err := lockFile(path)
	var inUse *InUseError
	if errors.As(err, &inUse) {
		return "", fmt.Errorf("sqlite: restore to %s: a host is serving it (pid %s); stop the host first, then restore", path, inUse.PID)
	}
	if err != nil {
		return "", err
	}
	defer unlockFile(lock)
	_, err = copyInto(ctx, from, path, path+".restoring", func() (err error) {
		replaced, err = moveAside(path)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("sqlite: restore %s to %s: %w", from, path, err)
	}
	return replaced, nil
}

// moveAside renames the database at path, its WAL and shared-memory
// files to path+".replaced" and the same suffixes, and returns the new
// name of the database; "" when there was none.
func moveAside(path string) (string, error) {
	aside := path + ".replaced"
	var moved bool
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(aside + suffix); err == nil {
			return "", fmt.Errorf("%s is there from an earlier restore; remove it (or move it) first", aside+suffix)
		}
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := os.Rename(path+suffix, aside+suffix)
		switch {
		case err == nil:
			moved = moved || suffix == ""
		case !errors.Is(err, os.ErrNotExist):
			return "", err
		}
	}
	if !moved {
		return "", nil
	}
	return aside, nil
}
