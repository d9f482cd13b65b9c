package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// TestBenchmarksOpenWithReportedFigures: BENCHMARKS.md opens with one
// table of the current figures, and every number in it is one that a
// dated section below it reports: the table invents nothing.
func TestBenchmarksOpenWithReportedFigures(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(guestbuild.Root(), "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	current, history := splitBenchmarks(string(src))
	if current == "" {
		t.Fatal(`BENCHMARKS.md does not open with a section "## Current figures" before its dated sections`)
	}
	number := regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	linkTarget := regexp.MustCompile(`\]\([^)]*\)`) // a link's target is no figure
	reported := map[string]bool{}
	for _, n := range number.FindAllString(history, -1) {
		reported[n] = true
	}
	rows := 0
	for _, line := range strings.Split(current, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		rows++
		for _, n := range number.FindAllString(linkTarget.ReplaceAllString(line, "]"), -1) {
			if !reported[n] {
				t.Errorf("BENCHMARKS.md's current figures quote %s, which no section below reports:\n%s", n, line)
			}
		}
	}
	if rows < 10 {
		t.Errorf("BENCHMARKS.md's current figures have %d rows; the table has changed shape", rows)
	}
}

// splitBenchmarks returns the section "## Current figures" of
// BENCHMARKS.md, which must be its first, and everything after it.
func splitBenchmarks(src string) (current, history string) {
	_, rest, _ := strings.Cut(src, "\n## ")
	if !strings.HasPrefix(rest, "Current figures\n") {
		return "", ""
	}
	current, history, _ = strings.Cut(rest, "\n## ")
	return current, history
}
