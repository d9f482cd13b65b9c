package postgres

import (
	"os"
	"testing"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openTest opens a store on a schema of its own, closed when t ends.
func openTest(t *testing.T, opts Options) *Store {
	t.Helper()
	s, err := Open(pgtest.Schema(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	_, which := pgtest.Server(t)
	t.Logf("PostgreSQL: %s", which)
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t, Options{}) })
}

func TestShared(t *testing.T) {
	t.Parallel()
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		url := pgtest.Schema(t)
		var stores []store.Store
		for _, id := range []string{"host-a", "host-b"} {
			s, err := Open(url, Options{HostID: id})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores = append(stores, s)
		}
		return stores[0], stores[1]
	})
}
