package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
)

// TestReconnect: when the server ends the store's connections
// (pg_terminate_backend, as an operator or a failover does), the next
// reads and writes succeed on new ones.
func TestReconnect(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	s, err := Open(url, Options{HostID: "reconnect-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.PutModule(ctx, store.Module{Hash: "m1", Wasm: []byte("\x00asm")}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'durabox reconnect-test'`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no connection of the store to terminate")
	}
	if _, err := s.GetModule(ctx, "m1"); err != nil {
		t.Fatalf("GetModule after the server ended %d connections: %v", killed, err)
	}
	if err := s.PutModule(ctx, store.Module{Hash: "m2", Wasm: []byte("\x00asm")}); err != nil {
		t.Fatalf("PutModule after the server ended %d connections: %v", killed, err)
	}
}

// TestServerDown: while the server is down, reads and writes fail, after
// the store has tried again for a while, with store.ErrUnavailable (a host
// answers 503: ask again), and succeed on new connections once it is back,
// whichever way it went down.
func TestServerDown(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t)
	s, err := Open(c.URL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.PutModule(ctx, store.Module{Hash: "m1", Wasm: []byte("\x00asm")}); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{pgtest.Fast, pgtest.Immediate, pgtest.Kill} {
		if err := c.Down(how); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetModule(ctx, "m1"); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("GetModule with the server down (%s): %v; want store.ErrUnavailable", how, err)
		}
		if err := s.PutModule(ctx, store.Module{Hash: "m-" + how, Wasm: []byte("\x00asm")}); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("PutModule with the server down (%s): %v; want store.ErrUnavailable", how, err)
		}
		if err := c.Up(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetModule(ctx, "m1"); err != nil {
			t.Errorf("GetModule after the server came back (%s): %v", how, err)
		}
		if err := s.PutModule(ctx, store.Module{Hash: "m-" + how, Wasm: []byte("\x00asm")}); err != nil {
			t.Errorf("PutModule after the server came back (%s): %v", how, err)
		}
	}
}

// TestOpenSurvivesALostConnection: a connection the server ends while
// Open prepares the schema (here, while it waits for the schema's lock,
// held by another) is tried again, and Open succeeds; a host did not
// start when a crash test cut its connection then.
func TestOpenSurvivesALostConnection(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, prepareSchemaLock); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		s, err := Open(url, Options{HostID: "open-cut-test"})
		if err == nil {
			s.Close()
		}
		opened <- err
	}()
	// Once the store's connection waits for the lock, the server ends it.
	for killed := 0; killed == 0; {
		select {
		case err := <-opened:
			t.Fatalf("Open returned (%v) before it waited for the schema's lock", err)
		default:
		}
		if err := holder.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = 'durabox open-cut-test' AND wait_event_type = 'Lock'`).Scan(&killed); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, prepareSchemaLock); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open, its connection ended while it prepared the schema: %v; want it to try again", err)
	}
}
