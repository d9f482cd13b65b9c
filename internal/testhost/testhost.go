// Package testhost runs a real host in a test's process: on a fresh SQLite
// file in the test's temporary directory (or the file a test names), its
// loop running until the test ends, with the modules the test gives it
// deployed.
package testhost

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/store/sqlite"
)

// Start starts a host with opts and deploys each module on it. The test's
// cleanup stops it, and fails the test if its loop ended with an error.
func Start(t testing.TB, opts host.Options, modules ...[]byte) *host.Host {
	t.Helper()
	return At(t, filepath.Join(t.TempDir(), "durabox.db"), opts, modules...)
}

// At is Start on the SQLite file at path, new or not.
func At(t testing.TB, path string, opts host.Options, modules ...[]byte) *host.Host {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		h.Close()
		st.Close()
	})
	for _, wasm := range modules {
		if _, err := h.Deploy(ctx, wasm); err != nil {
			t.Fatal(err)
		}
	}
	return h
}
