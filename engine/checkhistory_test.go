package engine

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckHistoryOnTheCorpus: every history of the golden corpus and of
// older engines passes CheckHistory, but the two damaged on purpose in a
// way it looks for (a completion that names no schedule of its kind),
// which fail it with the error that names the damage.
func TestCheckHistoryOnTheCorpus(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"nondeterminism-a-completion-of-the-wrong-kind":    "engine: history is corrupt: event 3, TimerFired, names event 2, which is no TimerCreated before it",
		"nondeterminism-a-completion-without-its-schedule": "engine: history is corrupt: event 3, ActivityCompleted, names event 7, which is no ActivityScheduled before it",
	}
	damaged := map[string]string{}
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("no golden histories: %v", err)
	}
	for _, f := range files {
		var h historyFile
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &h)
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if err := CheckHistory(h.Events); err != nil {
			if !errors.Is(err, ErrCorruptHistory) {
				t.Errorf("%s: %v does not wrap ErrCorruptHistory", name, err)
			}
			damaged[name] = err.Error()
		}
	}
	if !maps.Equal(damaged, want) {
		t.Errorf("CheckHistory refused %q\nwant %q", damaged, want)
	}
}
