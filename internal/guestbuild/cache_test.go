package guestbuild

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// module writes a module of two packages into a new directory, a main
// package and the package it imports, and returns the directory.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/guest\n\ngo 1.25\n")
	write(t, dir, "main.go", "package main\n\nimport \"example.com/guest/lib\"\n\nvar name = lib.Name\n\nfunc main() { println(name) }\n")
	write(t, dir, "lib/lib.go", "package lib\n\nvar Name = \"a\"\n")
	write(t, dir, "lib/lib_test.go", "package lib\n")
	write(t, dir, "lib/README.md", "# lib\n")
	return dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// build builds the module in dir with c, failing t on an error.
func (c cache) mustBuild(t *testing.T, dir string, vars ...string) (string, bool) {
	t.Helper()
	path, built, err := c.build(dir, ".", vars)
	if err != nil {
		t.Fatal(err)
	}
	return path, built
}

// TestSameInputsBuildOnce: a second build of the same inputs, or of
// inputs changed only where the build does not read (a test file, a
// README), finds the first's module.
func TestSameInputsBuildOnce(t *testing.T) {
	t.Parallel()
	c, dir := cache{t.TempDir()}, module(t)
	first, built := c.mustBuild(t, dir)
	if !built {
		t.Fatalf("the first build of %s found %s in an empty cache", dir, first)
	}
	write(t, dir, "lib/lib_test.go", "package lib\n\n// changed\n")
	write(t, dir, "lib/README.md", "# lib, changed\n")
	if again, built := c.mustBuild(t, dir); built || again != first {
		t.Errorf("the same inputs built again (%t), into %s; want the first build's %s", built, again, first)
	}
}

// TestAChangedInputBuildsAgain changes, one at a time, each kind of input
// a build reads: a changed input builds a new module, and the input
// changed back finds the first one.
//
// Not parallel: it sets $GOFLAGS.
func TestAChangedInputBuildsAgain(t *testing.T) {
	c, dir := cache{t.TempDir()}, module(t)
	first, _ := c.mustBuild(t, dir)
	edit := func(name, text string) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			was := read(t, filepath.Join(dir, name))
			write(t, dir, name, text)
			t.Cleanup(func() { write(t, dir, name, was) })
			return nil
		}
	}
	for _, tt := range []struct {
		name   string
		change func(t *testing.T) []string // returns the link-time variables
	}{
		{"the package's source", edit("main.go", "package main\n\nimport \"example.com/guest/lib\"\n\nfunc main() { println(lib.Name) }\n")},
		{"an imported package's source", edit("lib/lib.go", "package lib\n\nvar Name = \"b\"\n")},
		{"go.mod", edit("go.mod", "module example.com/guest\n\ngo 1.26\n")},
		{"a link-time variable", func(*testing.T) []string { return []string{"main.name=c"} }},
		{"GOFLAGS", func(t *testing.T) []string { t.Setenv("GOFLAGS", "-tags=other"); return nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vars := tt.change(t)
			if path, built := c.mustBuild(t, dir, vars...); !built || path == first {
				t.Errorf("after a change to %s, the build found %s (built: %t); want a new module", tt.name, path, built)
			}
		})
		if path, built := c.mustBuild(t, dir); built || path != first {
			t.Errorf("with %s changed back, the build made %s (built: %t); want the first module, %s", tt.name, path, built, first)
		}
	}
}

// TestConcurrentBuildersLeaveOneModule: builders of one key at once, as
// two test binaries can be, leave one module, the bytes a build of its
// own makes, and a reader meanwhile only ever reads the whole of it.
func TestConcurrentBuildersLeaveOneModule(t *testing.T) {
	t.Parallel()
	const builders = 4
	c, dir := cache{t.TempDir()}, module(t)
	k, err := key(dir, ".", nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(c.dir, k+".wasm")
	stop, done := make(chan struct{}), make(chan struct{})
	var reads [][]byte
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if data, err := os.ReadFile(path); err == nil {
				reads = append(reads, data)
			}
		}
	}()
	paths, errs := make([]string, builders), make([]error, builders)
	var wg sync.WaitGroup
	for i := range builders {
		wg.Go(func() { paths[i], _, errs[i] = c.build(dir, ".", nil) })
	}
	wg.Wait()
	close(stop)
	<-done
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	entries, err := os.ReadDir(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != k+".wasm" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the cache holds %q; want only %s.wasm", names, k)
	}
	for i, p := range paths {
		if p != path {
			t.Errorf("builder %d returned %s; want %s", i, p, path)
		}
	}
	own := filepath.Join(t.TempDir(), "own.wasm")
	if msg, err := Command(dir, ".", own).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	want := read(t, own)
	if got := read(t, path); got != want {
		t.Errorf("the cached module has %d bytes, not the %d of a build of its own", len(got), len(want))
	}
	for i, r := range reads {
		if !bytes.Equal(r, []byte(want)) {
			t.Fatalf("read %d of the module while it was built got %d bytes, not the whole %d", i, len(r), len(want))
		}
	}
}
