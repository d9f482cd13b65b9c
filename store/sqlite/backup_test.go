package sqlite

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestBackupWhileWriting: a backup of a store that commits all the while
// is the database as one commit left it: it passes Check, opens, and
// holds every row the store had when the copy began, and no half of a
// commit.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	s, path := openTest(t)
	fill(t, s, 30)
	before := dump(t, s)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			create(t, s, fmt.Sprintf("during-%04d", i))
		}
	}()
	dst := filepath.Join(t.TempDir(), "backup.db")
	stats, err := Backup(ctx, path, dst)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 || stats.Pages < 1 || stats.Bytes != fi.Size() {
		t.Fatalf("the backup: %v, %v; stats %+v", fi, err, stats)
	}
	if _, err := os.Stat(dst + ".part"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the backup left its partial file: %v", err)
	}
	c, err := Check(ctx, dst)
	if err != nil || len(c.Problems) > 0 {
		t.Fatalf("Check of the backup: %v, %q", err, c.Problems)
	}
	copied := dump(t, openAt(t, dst, Options{}))
	delete(before, "sqlite_sequence") // its counters went on
	for _, table := range slices.Sorted(maps.Keys(before)) {
		for _, row := range before[table] {
			if !slices.Contains(copied[table], row) {
				t.Fatalf("the backup lacks the row %s of %s", row, table)
			}
		}
	}
	if _, err := Backup(ctx, path, dst); err == nil || err.Error() != "sqlite: backup to "+dst+": the file exists; name a new file, or remove it first" {
		t.Fatalf("a backup onto a file: %v", err)
	}
}

// TestRestore: Restore refuses while a host holds the file and refuses a
// damaged backup; it puts the backup in place of a database, moving the
// one it replaces aside with its WAL, so that no frame of the old WAL is
// applied to the restored file.
func TestRestore(t *testing.T) {
	t.Parallel()
	s, path := openTest(t)
	fill(t, s, 5)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if _, err := Backup(ctx, path, backup); err != nil {
		t.Fatal(err)
	}
	want := dump(t, s)

	_, err := Restore(ctx, backup, path)
	if msg := fmt.Sprintf("sqlite: restore to %s: a host is serving it (pid %d); stop the host first, then restore", path, os.Getpid()); err == nil || err.Error() != msg {
		t.Fatalf("Restore onto a file in use: %v\nwant %s", err, msg)
	}

	// The database it replaces: a crash's, with commits in its WAL that
	// the backup does not have.
	fill2 := func(s *Store) {
		for i := range 5 {
			create(t, s, fmt.Sprintf("after-%d", i))
		}
	}
	fill2(s)
	old := crashCopy(t, path)
	replaced, err := Restore(ctx, backup, old)
	if err != nil || replaced != old+".replaced" {
		t.Fatalf("Restore = %q, %v; want %s.replaced", replaced, err, old)
	}
	for _, name := range []string{old + ".replaced", old + ".replaced-wal"} {
		if _, err := os.Stat(name); err != nil {
			t.Fatalf("the replaced database: %v", err)
		}
	}
	if _, err := os.Stat(old + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old WAL is still beside the restored file: %v", err)
	}
	if got := dump(t, openAt(t, old, Options{})); !equalDumps(got, want) {
		t.Fatal("the restored database is not the backup")
	}

	// Into a new file; then onto it again, with .replaced taken.
	fresh := filepath.Join(t.TempDir(), "new.db")
	if replaced, err := Restore(ctx, backup, fresh); err != nil || replaced != "" {
		t.Fatalf("Restore to a new file = %q, %v", replaced, err)
	}
	writeFile(t, fresh+".replaced", []byte("x"))
	if _, err := Restore(ctx, backup, fresh); err == nil || !strings.HasSuffix(err.Error(), fresh+".replaced is there from an earlier restore; remove it (or move it) first") {
		t.Fatalf("Restore with .replaced taken: %v", err)
	}

	// A damaged backup is refused, and nothing is changed.
	damagedBackup := filledCopy(t, 5, false)
	truncate(t, damagedBackup+"-wal", size(t, damagedBackup+"-wal")-100)
	target := filepath.Join(t.TempDir(), "target.db")
	if _, err := Restore(context.Background(), damagedBackup, target); err == nil || !strings.Contains(err.Error(), "the backup is damaged: its WAL (") {
		t.Fatalf("Restore of a damaged backup: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused restore made the file: %v", err)
	}
}

// equalDumps compares two dumps.
func equalDumps(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, slices.Equal)
}
