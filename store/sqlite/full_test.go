package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/smalldisk"
	"github.com/durabox/durabox/store"
)

// TestFullDisk: on a disk that fills, a write fails with store.ErrFull,
// saying what to do, Ping fails with it too, and nothing that was
// acknowledged is lost; once there is space, writes succeed again and Ping
// does, and the file reopens whole.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	path := filepath.Join(smalldisk.Mount(t, 4<<20), "test.db")
	s := openAt(t, path, Options{})
	withInstance(t, s)
	free := smalldisk.Fill(t, filepath.Dir(path))
	// The WAL reuses the room it has: writes succeed until it must grow.
	var acked []string
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		id := fmt.Sprintf("full-%05d", i)
		if err = s.CreateInstance(ctx, store.NewInstance{ID: id, Name: "Greeting", ModuleHash: "h1", Now: t0}); err == nil {
			acked = append(acked, id)
		}
	}
	if !errors.Is(err, store.ErrFull) || !strings.Contains(err.Error(), "sqlite: the disk holding the database is full ("+path+"): nothing of the write was written; free space on it, and writes succeed again") {
		t.Fatalf("a write on a full disk: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, store.ErrFull) {
		t.Fatalf("Ping on a full disk: %v; want store.ErrFull", err)
	}
	free()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping once there is space: %v", err)
	}
	if err := s.CreateInstance(ctx, store.NewInstance{ID: "after", Name: "Greeting", ModuleHash: "h1", Now: t0}); err != nil {
		t.Fatalf("a write once there is space: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, Options{})
	for _, id := range append(acked, "i1", "after") {
		if _, err := s.GetInstance(ctx, id); err != nil {
			t.Fatalf("the acknowledged instance %s: %v", id, err)
		}
	}
	t.Logf("%d writes acknowledged on the full disk before the first failed: %v", len(acked), err)
}
