package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

// newDB makes a Durabox database at path, with a module deployed.
func newDB(t *testing.T, path string) {
	t.Helper()
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutModule(context.Background(), store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawExec runs statements on the file as no store would.
func rawExec(t *testing.T, path, statements string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(statements); err != nil {
		t.Fatal(err)
	}
}

// TestCheckDB: check-db finds nothing in a database the store wrote (exit
// 0), and says what is wrong with a damaged one (exit 1), which serve then
// refuses to start on, saying what to do.
func TestCheckDB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "durabox.db")
	newDB(t, path)
	code, stdout, stderr := durabox("check-db", "--db", path)
	if code != 0 || stderr != "" || !strings.HasSuffix(stdout, path+": no problems found\n") ||
		!strings.Contains(stdout, "checked  SQLite's integrity_check\n") || !strings.Contains(stdout, "checked  the store's invariants (instances 0,") {
		t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	rawExec(t, path, `INSERT INTO messages (instance_id, payload, visible_at) VALUES ('gone', '{}', 0)`)
	code, stdout, _ = durabox("check-db", "--db", path)
	if code != 1 || !strings.Contains(stdout, "problem  messages: 1 rows for instance \"gone\", which does not exist\n") ||
		!strings.HasSuffix(stdout, path+": problems found: 1; what to do about them: docs/operator.md, \"A damaged database\"\n") {
		t.Fatalf("exit code %d, stdout:\n%s", code, stdout)
	}
	code, stdout, _ = durabox("check-db", "--db", path, "--json")
	var got checkDBJSON
	if err := json.Unmarshal([]byte(stdout), &got); code != 1 || err != nil || len(got.Problems) != 1 || len(got.Checked) != 5 {
		t.Fatalf("--json: exit code %d, %v, %+v", code, err, got)
	}

	// Garbage in the pages of a table: check-db and serve both see it.
	var page int64
	db, err := sql.Open("sqlite3", path)
	if err == nil {
		err = db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'instances'`).Scan(&page)
		db.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(strings.Repeat("garbage!", 512)), (page-1)*4096)
	f.Close()
	code, stdout, _ = durabox("check-db", "--db", path)
	if code != 1 || !strings.Contains(stdout, "problem  SQLite's integrity_check") {
		t.Fatalf("exit code %d, stdout:\n%s", code, stdout)
	}
	code, _, stderr = durabox("serve", "--db", path, "--addr", "127.0.0.1:0")
	want := "durabox: serve: sqlite: " + path + " is damaged: SQLite's quick_check "
	if code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "run durabox check-db --db "+path+" for everything wrong with it, and restore it from a backup") {
		t.Fatalf("serve: exit code %d, stderr:\n%s", code, stderr)
	}

	code, _, stderr = durabox("check-db", "--db", filepath.Join(dir, "none.db"))
	if code != 1 || !strings.Contains(stderr, "no such file or directory") {
		t.Fatalf("a missing file: exit code %d, stderr:\n%s", code, stderr)
	}
}

// TestCheckDBOnPostgres: check-db on a PostgreSQL schema a store made
// finds nothing, and names the schema of a URL that holds none.
func TestCheckDBOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	code, stdout, _ := durabox("check-db", "--db", url)
	if code != 1 || !strings.Contains(stdout, "problem  schema ") || !strings.Contains(stdout, "holds no tables: no Durabox database is there") {
		t.Fatalf("an empty schema: exit code %d, stdout:\n%s", code, stdout)
	}
	st, err := postgres.Open(url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, stdout, stderr := durabox("check-db", "--db", url)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "checked  the store's invariants (instances 0, executions 0, events 0, messages 0)\n") || !strings.HasSuffix(stdout, ": no problems found\n") {
		t.Fatalf("exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
