package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durabox/durabox/host/client"
)

func TestServeUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no --db", []string{"serve"}, "durabox serve: --db FILE is required\n"},
		{"an unknown durability", []string{"serve", "--db", "x.db", "--durability", "fast"}, "durabox serve: --durability is \"fast\"; it must be full or normal\n"},
		{"an argument", []string{"serve", "--db", "x.db", "now"}, "durabox serve: unexpected argument \"now\"\n"},
		{"--json", []string{"serve", "--db", "x.db", "--json"}, "durabox serve: flag provided but not defined: -json\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := durabox(tt.args...)
			if want := tt.wantStderr + "\n" + usage(t, "serve"); code != 2 || stdout != "" || stderr != want {
				t.Errorf("got exit code %d, stdout %q, stderr:\n%s\nwant exit code 2, stderr:\n%s", code, stdout, stderr, want)
			}
			if _, err := os.Stat("x.db"); !os.IsNotExist(err) {
				t.Errorf("x.db was created")
			}
		})
	}
}

// TestServe runs a real host on a new SQLite file, talks to it, and stops
// it with SIGINT.
func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "durabox.db")
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run([]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--durability", "normal"}, io.Discard, pw)
		pw.Close()
	}()
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var stderr []string
	serving := regexp.MustCompile(`^durabox: serving on http://(127\.0\.0\.1:\d+) \(db (.*)\)$`)
	var addr string
	for addr == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited with %d before it served:\n%s", <-exit, strings.Join(stderr, "\n"))
			}
			stderr = append(stderr, line)
			if m := serving.FindStringSubmatch(line); m != nil {
				if m[2] != db {
					t.Errorf("serving line %q names db %q, want %q", line, m[2], db)
				}
				addr = m[1]
			}
		case <-time.After(time.Minute):
			t.Fatalf("serve did not say where it serves within a minute:\n%s", strings.Join(stderr, "\n"))
		}
	}

	ctx := context.Background()
	c := client.New("http://"+addr, nil)
	if insts, err := c.List(ctx); err != nil || len(insts) != 0 {
		t.Errorf("List = %v, %v; want no instances", insts, err)
	}
	if _, err := c.Instance(ctx, "nope"); err == nil || err.Error() != `durabox: get instance: instance not found: "nope"` {
		t.Errorf("Instance(nope) = %v, want instance not found", err)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for line := range lines {
		stderr = append(stderr, line)
	}
	if code := <-exit; code != 0 {
		t.Errorf("serve exited with %d after SIGINT, want 0:\n%s", code, strings.Join(stderr, "\n"))
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no database: %v", err)
	}
}
