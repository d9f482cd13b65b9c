package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// metricsPath is the document whose table lists the host's metrics.
const metricsPath = "docs/operator.md"

// TestMetricsTableListsEveryMetric: the table of metrics in
// docs/operator.md names every metric the host defines, and no other.
func TestMetricsTableListsEveryMetric(t *testing.T) {
	t.Parallel()
	root := guestbuild.Root()
	doc, err := os.ReadFile(filepath.Join(root, metricsPath))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	name := regexp.MustCompile("`(durabox_[a-z_]+)")
	for _, line := range strings.Split(string(doc), "\n") {
		if first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " |"); ok && strings.HasPrefix(line, "| `durabox_") {
			for _, m := range name.FindAllStringSubmatch(first, -1) {
				listed[m[1]] = true
			}
		}
	}
	defined := metrics(t, root)
	for _, m := range defined {
		if !listed[m] {
			t.Errorf("%s's table of metrics lacks %s", metricsPath, m)
		}
		delete(listed, m)
	}
	for m := range listed {
		t.Errorf("%s's table of metrics lists %s, which no code defines", metricsPath, m)
	}
	if len(defined) == 0 {
		t.Fatal("found no metric defined in the code; the way metrics are defined has changed")
	}
}

// metrics returns the names of the metrics the code defines: each
// prometheus.*Opts Name and each prometheus.NewDesc, outside tests.
func metrics(t *testing.T, root string) []string {
	t.Helper()
	def := regexp.MustCompile(`(?:Name:\s*|NewDesc\()"(durabox_[a-z_]+)"`)
	var names []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".") && path != root):
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(path)
		for _, m := range def.FindAllSubmatch(src, -1) {
			names = append(names, string(m[1]))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
