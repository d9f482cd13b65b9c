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
