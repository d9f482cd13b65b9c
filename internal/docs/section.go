package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Section is the part of a document that a test writes from what it
// describes: between the line Begin, an HTML comment that says which
// test writes it, and the line End.
type Section struct {
	Path       string
	Begin, End string
}

// Check fails t unless the section of the document under root holds
// want; with update, it writes want there instead.
func (s Section) Check(t testing.TB, root, want string, update bool) {
	t.Helper()
	file := filepath.Join(root, filepath.FromSlash(s.Path))
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), s.Begin)
	got, after, ok2 := strings.Cut(rest, s.End)
	switch {
	case !ok || !ok2:
		t.Fatalf("%s has no section between\n%s and\n%s", s.Path, s.Begin, s.End)
	case update:
		if err := os.WriteFile(file, []byte(before+s.Begin+want+s.End+after), 0o644); err != nil {
			t.Fatal(err)
		}
	case got != want:
		t.Errorf("%s is out of date (%s):\n%s\nwant:\n%s", s.Path, strings.TrimSuffix(strings.TrimPrefix(s.Begin, "<!-- "), " -->\n"), got, want)
	}
}
