// Package replaytest lets an orchestration author's go test replay the
// histories of real instances against the module built from the code as it
// is now, and fail, showing where, if the new code would not reproduce one:
// the check durabox upgrade --dry-run makes on a host, made before the code
// is deployed.
//
//	func TestSavedHistoriesReplay(t *testing.T) {
//		wasm := replaytest.Build(t, ".")
//		replaytest.ReplayDir(t, wasm, "testdata/histories")
//	}
//
// Keep under testdata the histories of instances that run a long time, or
// that took paths worth keeping: what durabox history ID --json prints, or
// a repro bundle (durabox export ID -o case.dbx). A history file replays as
// the first execution of its instance, drawing from the seed a host gave
// it; a bundle replays its current execution with the seed it records.
// Replays run in the sandbox exactly as on a host (package host's
// Replayer), with no host and no database.
package replaytest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/internal/guestbuild"
)

// Build builds the Go main package in dir into a module, as durabox build
// does (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared), and returns
// its bytes. It fails t, with the compiler's output, if the build fails.
func Build(t testing.TB, dir string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "module.wasm")
	if msg, err := guestbuild.Command(dir, ".", out).CombinedOutput(); err != nil {
		t.Fatalf("replaytest: build %s: %v\n%s", dir, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("replaytest: %v", err)
	}
	return wasm
}

// Replay replays the history in file (a .json history or a .dbx bundle) on
// wasm, and fails t if the code does not reproduce it, with where it
// diverges (both sides) or why it failed. The guest's log, replayed steps
// included, goes to t.Log.
func Replay(t testing.TB, wasm []byte, file string) {
	t.Helper()
	replay(t, replayer(t), wasm, file)
}

// replayer returns a Replayer that t closes when it ends.
func replayer(t testing.TB) *host.Replayer {
	t.Helper()
	r, err := host.NewReplayer(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// replay is Replay on r, which compiles each module once.
func replay(t testing.TB, r *host.Replayer, wasm []byte, file string) {
	t.Helper()
	rec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep, err := r.Replay(context.Background(), wasm, rec, &log)
	if log.Len() > 0 {
		t.Logf("the guest's log, replaying %s:\n%s", file, strings.TrimSuffix(log.String(), "\n"))
	}
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		t.Fatalf("replaytest: %s: %v", file, err)
	}
}

// ReplayDir replays every .json and .dbx file in dir as Replay does, each in
// a subtest named for the file. It fails t if dir holds none.
func ReplayDir(t *testing.T, wasm []byte, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("replaytest: %v", err)
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".json" || ext == ".dbx") {
			files = append(files, e.Name())
		}
	}
	if len(files) == 0 {
		t.Fatalf("replaytest: %s holds no history (.json) and no bundle (.dbx)", dir)
	}
	slices.Sort(files)
	r := replayer(t)
	for _, name := range files {
		t.Run(name, func(t *testing.T) { replay(t, r, wasm, filepath.Join(dir, name)) })
	}
}

// Load reads the recording a history file (.json, as durabox history ID
// --json prints it) or a repro bundle (.dbx: its current execution) holds.
func Load(file string) (host.Recording, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return host.Recording{}, fmt.Errorf("replaytest: %w", err)
	}
	if filepath.Ext(file) == ".dbx" {
		b, err := bundle.Read(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			return host.Recording{}, fmt.Errorf("replaytest: %s: %w", file, err)
		}
		x := b.Executions[len(b.Executions)-1]
		return host.Recording{InstanceID: b.InstanceID, Execution: x.Number, Seed: x.Seed, History: x.History}, nil
	}
	events, err := bundle.ReadHistory(raw)
	if err != nil {
		return host.Recording{}, fmt.Errorf("replaytest: %s: %w", file, err)
	}
	id := ""
	for _, ev := range events {
		if ev.Kind == engine.OrchestrationStarted {
			id = ev.InstanceID
		}
	}
	return host.Recording{InstanceID: id, Execution: 1, Seed: host.Seed(id, 1, events), History: events}, nil
}
