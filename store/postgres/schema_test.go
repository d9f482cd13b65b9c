package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
)

// exec runs sql on the database url names.
func exec(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// tables lists the tables of the schema url uses.
func tables(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out string
	err = conn.QueryRow(ctx, `SELECT coalesce(string_agg(tablename, ',' ORDER BY tablename), '') FROM pg_tables WHERE schemaname = current_schema()`).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaRefused: a schema with other tables, or a newer Durabox's, is
// refused and left as it was.
func TestSchemaRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, setup, want string
	}{
		{"foreign", `CREATE TABLE orders (id int); INSERT INTO orders VALUES (1)`, "is not a Durabox database; refusing to use it, and it was left as it was"},
		{"another application", `CREATE TABLE durabox_meta (key text PRIMARY KEY, value text NOT NULL); INSERT INTO durabox_meta VALUES ('application', 'other'), ('schema_version', '1')`,
			"is not a Durabox database"},
		{"newer", `CREATE TABLE durabox_meta (key text PRIMARY KEY, value text NOT NULL); INSERT INTO durabox_meta VALUES ('application', 'durabox'), ('schema_version', '99')`,
			fmt.Sprintf("has Durabox schema version 99, newer than this durabox understands (%d); upgrade durabox to use it", schemaVersion)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := pgtest.Schema(t)
			exec(t, url, tt.setup)
			before := tables(t, url)
			s, err := Open(url, Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded; want it refused")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v; want it to say %q", err, tt.want)
			}
			if after := tables(t, url); after != before {
				t.Fatalf("the refused schema changed: tables %s, were %s", after, before)
			}
			c, err := Check(context.Background(), url)
			if err != nil || len(c.Problems) != 1 || !strings.Contains(c.Problems[0], tt.want) {
				t.Fatalf("Check: %v, %+v; want one problem that says %q", err, c, tt.want)
			}
		})
	}
}

// TestReopen: a store opens its own schema again, keeping what it holds,
// and two hosts opening an empty schema at once create it once.
func TestReopen(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := Open(url, Options{})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Open at once: %v", err)
		}
	}
	want := "activity_tasks,audit_log,batch_items,batches,continued_executions,durabox_meta,history,instance_attributes,instances,messages,modules,orchestration_modules,schedule_runs,schedules,updates"
	if got := tables(t, url); got != want {
		t.Fatalf("tables %s; want %s", got, want)
	}
}

// TestOpenErrors: a URL PostgreSQL cannot read, and a server that does not
// answer, fail Open with what to do.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, want string
	}{
		{"bad url", "postgres://u@host:notaport/db", "is not one PostgreSQL understands"},
		{"server down", "postgres://postgres:secret@127.0.0.1:1/postgres?sslmode=disable", "cannot reach the database at postgres://postgres:xxxxx@127.0.0.1:1/postgres?sslmode=disable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.url, Options{ConnectTimeout: 3 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v; want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("Open: %v; the password shows", err)
			}
		})
	}
}

// TestOptions: bad options are refused in plain words.
func TestOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{MaxConns: -1}, {ConnectTimeout: -time.Second}} {
		if _, err := Open("postgres://x@127.0.0.1/x", o); err == nil || !strings.Contains(err.Error(), "it must be 0") {
			t.Errorf("Open with %+v: %v; want it refused", o, err)
		}
	}
}

// TestMigrationDatesFinished: a schema of version 13, its finished
// instances indexed by (status, updated_at), migrates to one where each
// finished instance's finished_at is its updated_at and a running one's
// is NULL, indexed by instances_finished_at in place of the old index.
func TestMigrationDatesFinished(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	s, err := Open(url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutModule(context.Background(), store.Module{Hash: "m", Wasm: []byte("\x00asm"), Orchestrations: []string{"O"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, url, `ALTER TABLE instances DROP COLUMN finished_at;
		CREATE INDEX instances_finished ON instances(status, updated_at);
		INSERT INTO instances (id, name, module_hash, execution_id, status, created_at, updated_at)
			VALUES ('done', 'O', 'm', 1, 'Completed', 1, 7), ('running', 'O', 'm', 1, 'Running', 1, 8);
		UPDATE durabox_meta SET value = '13' WHERE key = 'schema_version'`)
	s, err = Open(url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var dates, indexes string
	err = s.pool.QueryRow(context.Background(), `SELECT
		(SELECT string_agg(id || '=' || coalesce(finished_at::text, 'NULL'), ',' ORDER BY id) FROM instances),
		(SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'instances_finished%')`).
		Scan(&dates, &indexes)
	if err != nil {
		t.Fatal(err)
	}
	if dates != "done=7,running=NULL" || indexes != "instances_finished_at" {
		t.Errorf("after the migration, finished_at %s and indexes %s; want done=7,running=NULL and instances_finished_at", dates, indexes)
	}
}

// TestOldServerRefused: a server older than PostgreSQL 12 is refused
// with an error that names its version and what to do, before anything
// is written; 12 and later are not.
func TestOldServerRefused(t *testing.T) {
	t.Parallel()
	err := schemaState{server: 110022, serverName: "11.22 (Debian 11.22-1)"}.refusal()
	if err == nil || !strings.Contains(err.Error(), "PostgreSQL 11.22 (Debian 11.22-1)") || !strings.Contains(err.Error(), "12 or later") {
		t.Errorf("an 11.22 server: %v; want a refusal naming its version and 12", err)
	}
	for _, v := range []int{120000, 150020} {
		if err := (schemaState{server: v}).refusal(); err != nil {
			t.Errorf("server_version_num %d: %v; want it served", v, err)
		}
	}
}
