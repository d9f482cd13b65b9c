package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		durability  Durability
		synchronous int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"", 2},
		{DurabilityFull, 2},
		{DurabilityNormal, 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.durability), func(t *testing.T) {
			s := openAt(t, filepath.Join(t.TempDir(), "test.db"), Options{Durability: tt.durability})
			var synchronous, foreignKeys, busyTimeout int
			var journal string
			for _, p := range []struct {
				pragma string
				into   any
			}{
				{"synchronous", &synchronous}, {"foreign_keys", &foreignKeys}, {"busy_timeout", &busyTimeout}, {"journal_mode", &journal},
			} {
				if err := s.db.QueryRow(`PRAGMA ` + p.pragma).Scan(p.into); err != nil {
					t.Fatal(err)
				}
			}
			if synchronous != tt.synchronous || foreignKeys != 1 || busyTimeout != 5000 || journal != "wal" {
				t.Fatalf("synchronous %d, foreign_keys %d, busy_timeout %d, journal_mode %s; want %d, 1, 5000, wal",
					synchronous, foreignKeys, busyTimeout, journal, tt.synchronous)
			}
		})
	}
	t.Run("bad durability", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "test.db")
		_, err := Open(path, Options{Durability: "fast"})
		if err == nil || err.Error() != `sqlite: durability "fast" is not one of full, normal` {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused Open created the file: %v", err)
		}
	})
}

func TestOneHostPerFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "durabox.db")
	first, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := os.ReadFile(path + ".lock"); err != nil || string(pid) != strconv.Itoa(os.Getpid())+"\n" {
		t.Fatalf("lock file holds %q, %v; want this process's pid", pid, err)
	}
	_, err = Open(path, Options{})
	want := fmt.Sprintf("sqlite: %s is in use by another durabox process (pid %d); stop it first or use another --db file", path, os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("second open: %v\nwant %s", err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file left after Close: %v", err)
	}
	openAt(t, path, Options{})
}

func TestRefusesFilesItDoesNotOwn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string // after "sqlite: PATH "
	}{
		{"random bytes", func(t *testing.T, path string) {
			b := make([]byte, 8192)
			r := rand.NewChaCha8([32]byte{1})
			r.Read(b)
			writeFile(t, path, b)
		}, "is not a SQLite database (its header is wrong); refusing to open it, and it was left as it was"},
		{"text", func(t *testing.T, path string) {
			writeFile(t, path, bytes.Repeat([]byte("not a database\n"), 100))
		}, "is not a SQLite database (its header is wrong); refusing to open it, and it was left as it was"},
		{"shorter than a header", func(t *testing.T, path string) {
			writeFile(t, path, []byte("SQLite for"))
		}, "is not a SQLite database (its header is wrong); refusing to open it, and it was left as it was"},
		{"someone else's SQLite database", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite3", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (1)`); err != nil {
				t.Fatal(err)
			}
		}, "is a SQLite database but not a Durabox one; refusing to open it, and it was left as it was"},
		{"a newer durabox's database", func(t *testing.T, path string) {
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			withInstance(t, s)
			if _, err := s.db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion+3)); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}, fmt.Sprintf("has schema version %d, newer than this durabox understands (%d); upgrade durabox to open it", schemaVersion+3, schemaVersion)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			tt.make(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(path, Options{})
			if want := "sqlite: " + path + " " + tt.want; err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatal("the refused file was modified")
			}
			if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("lock file left after a refused Open: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReopenKeepsEverything checks that every row of every table, activity
// leases included, survives closing and opening the file again (instance
// locks are in memory: locks_test.go).
func TestReopenKeepsEverything(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, Options{Durability: DurabilityNormal})
	if err != nil {
		t.Fatal(err)
	}
	withInstance(t, s)
	firstTurn(t, s)
	create(t, s, "i2")
	if err := s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "Approve", Result: json.RawMessage(`true`)}, t0, nil); err != nil {
		t.Fatal(err)
	}
	if w, err := leaseNext(s, t0, time.Minute); err != nil || w == nil {
		t.Fatalf("activity: %+v, %v", w, err)
	}
	lock(t, s, t0)
	before := dump(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path, Options{})
	if after := dump(t, s); !reflect.DeepEqual(after, before) {
		t.Fatalf("after reopening:\n%q\nbefore closing:\n%q", after, before)
	}
	if len(before["history"]) != 3 || len(before["messages"]) != 3 || len(before["activity_tasks"]) != 1 || len(before["instances"]) != 2 {
		t.Fatalf("the state compared is not the one built: %q", before)
	}
}

func TestMigratesVersion1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v1.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withInstance(t, s)
	// Make it a version-1 database: modules had no env column then, and
	// instances no parent, no custom status and no attempt count.
	if _, err := s.db.Exec(toVersion5 + `ALTER TABLE modules DROP COLUMN env; ALTER TABLE instances DROP COLUMN parent_id;
		ALTER TABLE instances DROP COLUMN parent_schedule_id; ALTER TABLE instances DROP COLUMN custom_status;
		ALTER TABLE instances DROP COLUMN attempt; PRAGMA user_version = 1;`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openAt(t, path, Options{})
	var version int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("version %d, %v after opening; want %d", version, err, schemaVersion)
	}
	fresh, _ := openTest(t)
	if got, want := schemaOf(t, s.db), schemaOf(t, fresh.db); !reflect.DeepEqual(got, want) {
		t.Fatalf("migrated schema:\n%s\nwant the schema of a new database:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m, err := s.GetModule(ctx, "h1")
	if err != nil || string(m.Wasm) != "w1" || len(m.Env) != 0 {
		t.Fatalf("module after migration: %+v, %v", m, err)
	}
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, Env: []string{"A=1"}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.GetModule(ctx, "h1"); !reflect.DeepEqual(m.Env, []string{"A=1"}) {
		t.Fatalf("env after redeploy: %q", m.Env)
	}
	if inst, err := s.GetInstance(ctx, "i1"); err != nil || inst.Name != "Greeting" || inst.CustomStatus != "" {
		t.Fatalf("instance after migration: %+v, %v", inst, err)
	}
	if item := lock(t, s, t0); item.Attempt != 1 {
		t.Fatalf("first delivery after migration has Attempt %d", item.Attempt)
	}
}

// TestPathsTheDriverCouldMisread opens files whose names mean something in
// a URI.
func TestPathsTheDriverCouldMisread(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"my db.db", "what?.db", "a#b.db", "100%.db", "x.db?_fk=0"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			s := openAt(t, path, Options{})
			withInstance(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
				t.Fatalf("the database is not at %q: %v", path, err)
			}
			if _, err := openAt(t, path, Options{}).GetInstance(ctx, "i1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFilesOnlyItsOwnerReads checks that a new database, its WAL and
// shared-memory files and its lock file are its owner's alone: they hold
// the secrets deployed with the modules.
func TestFilesOnlyItsOwnerReads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.db")
	s := openAt(t, path, Options{})
	withInstance(t, s)
	for _, name := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %v; want -rw-------", filepath.Base(name), mode)
		}
	}
}

// TestReadsAfterCloseFailCleanly checks that a reader still running when the
// store closes (a host's dispatcher, say) gets an error, not a nil pointer,
// and that a second Close does nothing.
func TestReadsAfterCloseFailCleanly(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.NextVisibleAt(context.Background(), time.Unix(1, 0)); err == nil {
		t.Error("NextVisibleAt on a closed store returned no error")
	}
	if _, err := s.History(context.Background(), "x", 1); err == nil {
		t.Error("History on a closed store returned no error")
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing a closed store: %v", err)
	}
}

// TestReadsRefuseACancelledContext: reads run detached from their
// context's cancellation (readPool), but one whose context has already
// ended does not run.
func TestReadsRefuseACancelledContext(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"O"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateInstance(ctx, store.NewInstance{ID: "a", Name: "O", ModuleHash: "h1", Now: t0}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.GetInstance(cancelled, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetInstance with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := s.HasWork(cancelled, "a", t0); !errors.Is(err, context.Canceled) {
		t.Errorf("HasWork with a cancelled context: %v; want context.Canceled", err)
	}
	if items, err := s.LockNextInstances(cancelled, t0, time.Minute, 1, nil); !errors.Is(err, context.Canceled) || len(items) != 0 {
		t.Errorf("LockNextInstances with a cancelled context: %d items, %v; want none and context.Canceled", len(items), err)
	}
	if item, err := lockNext(s, t0, time.Minute); err != nil || item == nil || item.Instance.ID != "a" {
		t.Fatalf("after the cancelled fetch, the instance is not there to lock: %v, %v", item, err)
	}
}
