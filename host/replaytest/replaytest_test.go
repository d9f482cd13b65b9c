package replaytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store/sqlite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

const versionsPkg = "host/testdata/guests/versions"

// fakeT records what a test helper reports, and stops it at Fatal as
// testing does.
type fakeT struct {
	testing.TB
	failure string
}

func (f *fakeT) Helper()                   {}
func (f *fakeT) Logf(string, ...any)       {}
func (f *fakeT) Cleanup(func())            {}
func (f *fakeT) TempDir() string           { return os.TempDir() }
func (f *fakeT) Fatal(args ...any)         { f.failure = fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeT) Fatalf(s string, a ...any) { f.failure = fmt.Sprintf(s, a...); runtime.Goexit() }

// fails runs fn with a fakeT and returns how it failed ("" if it did not).
func fails(fn func(t testing.TB)) string {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.failure
}

// record runs the versions guest's Flow on a real host until it waits for
// its second "go", and saves its history and its bundle in dir.
func record(t *testing.T, dir string) (history, dbx string) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(st, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		h.Close()
		st.Close()
	}()
	wasm, err := guestbuild.Wasm(versionsPkg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, "Flow", []byte(`"x"`), "saved"); err != nil {
		t.Fatal(err)
	}
	waits := func(n int) []engine.Event {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			events, err := h.History(ctx, "saved")
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, ev := range events {
				if ev.Kind == engine.ExternalSubscribed {
					got++
				}
			}
			if got == n {
				return events
			}
		}
		t.Fatalf("the instance never waited %d times", n)
		return nil
	}
	waits(1)
	if err := h.Raise(ctx, "saved", "go", nil, false); err != nil {
		t.Fatal(err)
	}
	events := waits(2)
	raw, err := bundle.HistoryJSON(events)
	if err != nil {
		t.Fatal(err)
	}
	history = filepath.Join(dir, "saved.json")
	if err := os.WriteFile(history, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := h.Export(ctx, "saved")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	dbx = filepath.Join(dir, "saved.dbx")
	if err := os.WriteFile(dbx, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return history, dbx
}

func TestReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	history, dbx := record(t, dir)
	v1, err := guestbuild.Wasm(versionsPkg)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := guestbuild.Wasm(versionsPkg, "main.version=v2")
	if err != nil {
		t.Fatal(err)
	}
	v3, err := guestbuild.Wasm(versionsPkg, "main.version=v3")
	if err != nil {
		t.Fatal(err)
	}
	// The recorded code and the patched code replay both files.
	for _, wasm := range [][]byte{v1, v3} {
		ReplayDir(t, wasm, dir)
	}
	sum := sha256.Sum256(v2)
	for _, file := range []string{history, dbx} {
		got := fails(func(t testing.TB) { Replay(t, v2, file) })
		want := fmt.Sprintf(`replaytest: %s: durabox: replay of instance saved, execution 1, on module %x: nondeterminism at event 4: history has ActivityScheduled("Step", "a"), the orchestration emitted ScheduleActivity("Step", "b")`, file, sum[:6])
		if got != want {
			t.Errorf("replay of %s on v2 failed with:\n%s\nwant:\n%s", file, got, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	status := write("status.json", `{"id": "saved", "status": "Running"}`)
	broken := write("broken.dbx", "PK\x03\x04 not really")
	empty := t.TempDir()
	for _, tt := range []struct {
		name string
		run  func(t testing.TB)
		want string
	}{
		{"a file that is not a history", func(t testing.TB) { Replay(t, []byte("\x00asm"), status) },
			"replaytest: " + status + `: not a history such as durabox history --json prints: json: unknown field "id"`},
		{"a corrupted bundle", func(t testing.TB) { Replay(t, []byte("\x00asm"), broken) },
			"replaytest: " + broken + ": bundle: not a Durabox repro bundle: it is not a zip archive (zip: not a valid zip file)"},
		{"a package that does not build", func(t testing.TB) { Build(t, empty) }, "replaytest: build " + empty + ": exit status 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fails(tt.run); !strings.HasPrefix(got, tt.want) {
				t.Errorf("failed with:\n%s\nwant it to start:\n%s", got, tt.want)
			}
		})
	}
}
