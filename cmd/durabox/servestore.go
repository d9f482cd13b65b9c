package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

// open opens the store --db names, for a host with opts: a SQLite file,
// or a PostgreSQL database this host shares as --host-id.
func (c *serveConfig) open(opts host.Options) (store.Store, error) {
	if c.postgres() {
		return postgres.Open(c.db, serving.Postgres(opts, c.id(), nil))
	}
	o := serving.SQLite(opts, durabilities[c.durability], nil)
	o.OpenCheck = openChecks[c.openCheck]
	return sqlite.Open(c.db, o)
}

// id is the host's id on PostgreSQL: --host-id, or the machine's name.
func (c *serveConfig) id() string {
	if c.hostID != "" {
		return c.hostID
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		return "durabox"
	}
	return name
}

// defaultCacheDir is where compiled modules are cached without
// --cache-dir: beside the SQLite file, or in the user's cache directory
// under the host's id.
func (c *serveConfig) defaultCacheDir() (string, error) {
	if !c.postgres() {
		return c.db + ".wasmcache", nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("durabox: serve: no cache directory for compiled modules (%v); give one with --cache-dir", err)
	}
	return filepath.Join(dir, "durabox", strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(c.id())), nil
}

// dbName is --db as serve prints it: a URL without its password.
func (c *serveConfig) dbName() string {
	if !c.postgres() {
		return c.db
	}
	u, err := url.Parse(c.db)
	if err != nil {
		return "postgres"
	}
	return u.Redacted()
}
