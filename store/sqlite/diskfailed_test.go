package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/faultfs"
	"github.com/durabox/durabox/store"
)

// TestDiskFailed: on a disk that fails writes or syncs with EIO (a FUSE
// file system that fails them on demand), a write fails with
// store.ErrDiskFailed, saying what became of it and what to do, Ping fails
// with it too, and nothing that was acknowledged is lost; once the disk
// works, Ping succeeds and so do writes, without a restart, and the file
// reopens whole, without the writes that failed.
func TestDiskFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		faults faultfs.Faults
		says   string
	}{
		{"every write", faultfs.Faults{FailWrites: true}, "nothing of the write was written; ask again once the disk works"},
		// A commit's first frames reach the WAL, the rest fail.
		{"the WAL's writes, a commit's first frames written", faultfs.Faults{FailWrites: true, WriteBudget: 5000, Only: "-wal"}, "nothing of the write was written; ask again once the disk works"},
		{"every fsync", faultfs.Faults{FailFsyncs: true}, "the disk failed to sync it, so it was not acknowledged, and it may or may not be kept; ask again once the disk works"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			disk := faultfs.Mount(t)
			path := filepath.Join(disk.Dir(), "test.db")
			s := openAt(t, path, Options{})
			withInstance(t, s)
			acked := []string{"i1"}
			write := func(id string) error {
				err := s.CreateInstance(ctx, store.NewInstance{ID: id, Name: "Greeting", ModuleHash: "h1", Now: t0})
				if err == nil {
					acked = append(acked, id)
				}
				return err
			}
			for i := range 3 {
				if err := write(fmt.Sprint("before-", i)); err != nil {
					t.Fatal(err)
				}
			}
			disk.Set(tc.faults)
			var failed []string
			for i := range 3 {
				id := fmt.Sprint("failed-", i)
				err := write(id)
				if !errors.Is(err, store.ErrDiskFailed) || !strings.Contains(err.Error(), "sqlite: the disk holding the database failed a write ("+path+"): "+tc.says) {
					t.Fatalf("a write the disk fails: %v; want store.ErrDiskFailed saying %q", err, tc.says)
				}
				failed = append(failed, id)
			}
			if err := s.Ping(ctx); !errors.Is(err, store.ErrDiskFailed) {
				t.Fatalf("Ping on a failing disk: %v; want store.ErrDiskFailed", err)
			}
			if n := disk.Set(faultfs.Faults{}); n == 0 {
				t.Fatal("the disk failed nothing")
			}
			if err := s.Ping(ctx); err != nil {
				t.Fatalf("Ping once the disk works: %v", err)
			}
			if err := write("after"); err != nil {
				t.Fatalf("a write once the disk works: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openAt(t, path, Options{})
			for _, id := range acked {
				if _, err := s.GetInstance(ctx, id); err != nil {
					t.Errorf("the acknowledged instance %s: %v", id, err)
				}
			}
			for _, id := range failed {
				if _, err := s.GetInstance(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("the instance %s, whose write failed: %v; want not found", id, err)
				}
			}
		})
	}
}
