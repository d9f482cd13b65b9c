package docs

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Markdown returns the paths, relative to root and with slashes, of the
// project's Markdown documents: every .md file but those under testdata
// and hidden directories (test inputs, and what tools keep).
func Markdown(root string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(paths)
	return paths, err
}

// Map returns the documents a reader walks from README.md: README.md,
// DESIGN.md and every document in docs/.
func Map(root string) ([]string, error) {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	paths := []string{"README.md", "DESIGN.md"}
	for _, g := range guides {
		paths = append(paths, "docs/"+filepath.Base(g))
	}
	return paths, err
}
