package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// makefile returns the repository's Makefile with its continued lines
// joined.
func makefile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(guestbuild.Root(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(src), "\\\n", " ")
}

var (
	makeTarget = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)
	makeCheck  = regexp.MustCompile(`(?m)^CHECK\s*:=(.*)$`)
	makeRun    = regexp.MustCompile(`^(?:\$ )?make ([a-z][a-z0-9-]*)`)
	pkgSpan    = regexp.MustCompile("`(\\./[^`]*)`")
)

// TestMakeCheckIsDescribed: docs/testing.md's paragraph on what make
// check runs ("`make check` runs …") names the packages of the Makefile's
// CHECK, no more and no fewer.
func TestMakeCheckIsDescribed(t *testing.T) {
	t.Parallel()
	m := makeCheck.FindStringSubmatch(makefile(t))
	if m == nil {
		t.Fatal("the Makefile has no line CHECK := …, the packages make check tests")
	}
	want := strings.Fields(m[1])
	d, err := Read(guestbuild.Root(), "docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range d.Text {
		if strings.HasPrefix(p.Text, "`make check` runs ") {
			for _, s := range pkgSpan.FindAllStringSubmatch(p.Text, -1) {
				got = append(got, s[1])
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("docs/testing.md says make check runs\n\t%s\nthe Makefile's CHECK is\n\t%s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// TestDocsNameMakeTargets: every make command a document gives (`make
// check`, a line "make race  # …") names a target of the Makefile.
func TestDocsNameMakeTargets(t *testing.T) {
	t.Parallel()
	targets := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(makefile(t), -1) {
		targets[m[1]] = true
	}
	root := guestbuild.Root()
	paths, err := Markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		d, err := Read(root, path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Code {
			if m := makeRun.FindStringSubmatch(strings.TrimSpace(c.Text)); m != nil && !targets[m[1]] {
				t.Errorf("%s:%d: make %s: the Makefile has no target %s", path, c.Line, m[1], m[1])
			}
		}
	}
}
