package guestbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CacheEnv names the environment variable that sets the directory of
// built modules shared by every test process; unset, it is durabox/guests
// under the user's cache directory (os.UserCacheDir).
const CacheEnv = "DURABOX_GUEST_CACHE"

// As in the go command's own cache: a module used is marked so at most
// once an hour, and one unused for five days is removed.
const (
	markEvery = time.Hour
	keepFor   = 5 * 24 * time.Hour
)

// cache is a directory of built modules, each named by the key of its
// build (key.go) and written whole: built in a directory of its own, then
// renamed into place. Processes that build the same key at once each
// rename a complete module over the other's, the same bytes, so no
// reader ever opens half a module.
type cache struct{ dir string }

// sharedCache returns the cache $DURABOX_GUEST_CACHE names, or the one
// in the user's cache directory.
func sharedCache() (cache, error) {
	if dir := os.Getenv(CacheEnv); dir != "" {
		return cache{dir}, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return cache{}, fmt.Errorf("guestbuild: no directory for built modules: set $%s (%w)", CacheEnv, err)
	}
	return cache{filepath.Join(dir, "durabox", "guests")}, nil
}

// build returns the path of the module Command(dir, pkg, …, vars...)
// builds, from the cache or built into it, and whether it built it.
func (c cache) build(dir, pkg string, vars []string) (path string, built bool, err error) {
	k, err := key(dir, pkg, vars)
	if err != nil {
		return "", false, fmt.Errorf("guestbuild: the inputs of %s: %w", pkg, err)
	}
	return c.keyed(k, func(out string) error {
		if msg, err := Command(dir, pkg, out, vars...).CombinedOutput(); err != nil {
			return fmt.Errorf("build %s to wasm: %v\n%s", pkg, err, msg)
		}
		return nil
	})
}

// keyed returns the path of the module of key k, from the cache or built
// into it by run (which writes the module to out), and whether it built
// it.
func (c cache) keyed(k string, run func(out string) error) (path string, built bool, err error) {
	path = filepath.Join(c.dir, k+".wasm")
	if info, err := os.Stat(path); err == nil {
		if time.Since(info.ModTime()) > markEvery {
			now := time.Now()
			os.Chtimes(path, now, now) // a module left unmarked is only rebuilt sooner
		}
		return path, false, nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return "", false, fmt.Errorf("guestbuild: %w", err)
	}
	tmp, err := os.MkdirTemp(c.dir, k+".tmp")
	if err != nil {
		return "", false, fmt.Errorf("guestbuild: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "module.wasm")
	if err := run(out); err != nil {
		return "", false, err
	}
	if err := os.Rename(out, path); err != nil {
		return "", false, fmt.Errorf("guestbuild: %w", err)
	}
	return path, true, nil
}

// trim removes the modules no build has used for keepFor, and what a
// build that never finished left behind. What it cannot read or remove
// stays, for the next trim.
func (c cache) trim() {
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		stale := time.Since(info.ModTime()) > keepFor
		if stale && (strings.HasSuffix(e.Name(), ".wasm") || strings.Contains(e.Name(), ".tmp")) {
			os.RemoveAll(filepath.Join(c.dir, e.Name()))
		}
	}
}
