package docs

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// TestREADMEIsAShortMap: README.md says what Durabox is, the two
// commands and the user's path, and points into docs/ for the rest.
func TestREADMEIsAShortMap(t *testing.T) {
	t.Parallel()
	const most = 300
	d, err := Read(guestbuild.Root(), "README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Lines(); n >= most {
		t.Errorf("README.md has %d lines; keep it under %d, and move the details into docs/", n, most)
	}
	for _, guide := range guides(t) {
		if !linksTo(d, guide) {
			t.Errorf("README.md's contents do not link to %s", guide)
		}
	}
}

// guides returns the documents in docs/.
func guides(t *testing.T) []string {
	t.Helper()
	paths, err := Map(guestbuild.Root())
	if err != nil {
		t.Fatal(err)
	}
	return paths[2:]
}

// linksTo reports whether d links to the document at path.
func linksTo(d *Doc, path string) bool {
	for _, l := range d.Links {
		if target, _, _ := strings.Cut(l.Text, "#"); resolve(d.Path, target) == path {
			return true
		}
	}
	return false
}

// TestLinksResolve: every relative link of every document names a file
// or directory that exists, and an anchor names a heading of its
// document.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	root := guestbuild.Root()
	paths, err := Markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]*Doc{}
	for _, p := range paths {
		if docs[p], err = Read(root, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range paths {
		for _, bad := range broken(root, docs[p], docs) {
			t.Errorf("%s: %s", p, bad)
		}
	}
}

// TestBrokenLinksAreFound: the check of TestLinksResolve finds each kind
// of broken link.
func TestBrokenLinksAreFound(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"README.md":     "# Title\n\n## Two commands\n\nSee [the guide](docs/guide.md#serving) and [here](#two-commands).\n",
		"docs/guide.md": "# Guide\n\n## Serving\n\n[back](../README.md#title), [`durabox` itself](../cmd/), `[in code](nowhere.md)`\n",
	}
	for _, dir := range []string{"docs", "cmd"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, link, want string
	}{
		{"good links", "", ""},
		{"missing file", "[x](docs/gone.md)", `line 7: docs/gone.md: no such file`},
		{"missing anchor", "[x](docs/guide.md#running)", `line 7: docs/guide.md#running: docs/guide.md has no heading "running"`},
		{"missing anchor here", "[x](#three-commands)", `line 7: #three-commands: README.md has no heading "three-commands"`},
		{"anchor of a file that is not Markdown", "[x](cmd/#main)", `line 7: cmd/#main: cmd is not a Markdown document, and has no headings`},
		{"image", "![x](docs/shot.png)", `line 7: docs/shot.png: no such file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readme := files["README.md"] + "\n" + tt.link + "\n"
			if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644); err != nil {
				t.Fatal(err)
			}
			docs := map[string]*Doc{}
			for name := range files {
				d, err := Read(root, name)
				if err != nil {
					t.Fatal(err)
				}
				docs[name] = d
			}
			got := strings.Join(broken(root, docs["README.md"], docs), "\n")
			if got != tt.want {
				t.Errorf("broken links:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// broken returns d's relative links that do not resolve: to a file
// that does not exist, or to an anchor that no heading of its document
// (one of docs, by path) has.
func broken(root string, d *Doc, docs map[string]*Doc) []string {
	var out []string
	for _, l := range d.Links {
		u, err := url.Parse(l.Text)
		if err != nil {
			out = append(out, l.String()+": "+err.Error())
			continue
		}
		if u.Scheme != "" || u.Host != "" {
			continue
		}
		target := d.Path
		if u.Path != "" {
			target = resolve(d.Path, u.Path)
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
				out = append(out, l.String()+": no such file")
				continue
			}
		}
		if u.Fragment == "" {
			continue
		}
		switch to := docs[target]; {
		case to == nil:
			out = append(out, l.String()+": "+target+" is not a Markdown document, and has no headings")
		case !to.HasAnchor(u.Fragment):
			out = append(out, l.String()+": "+target+" has no heading "+`"`+u.Fragment+`"`)
		}
	}
	return out
}

// resolve returns the path, from the repository's root, of a link's
// target written in the document at from.
func resolve(from, target string) string {
	if target == "" {
		return from
	}
	return strings.TrimSuffix(path.Join(path.Dir(from), target), "/")
}
