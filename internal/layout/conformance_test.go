package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// testRef is a test as engine/CONFORMANCE.md names it: `package: TestName`,
// with an optional subtest.
var testRef = regexp.MustCompile("`([a-z0-9/._-]+): (Test[A-Za-z0-9_]+)(/[^`]*)?`")

// wasmPackages are the packages whose tests run guests on a real host.
var wasmPackages = map[string]bool{"host": true, "cmd/durabox": true, "internal/kitparity": true}

// TestConformanceTableNamesRealTests checks engine/CONFORMANCE.md: every
// row names tests that exist, or says why it has none (n/a, pending); a
// row that claims a wasm test names one in a package that runs guests on a
// real host.
func TestConformanceTableNamesRealTests(t *testing.T) {
	t.Parallel()
	root := guestbuild.Root()
	table, err := os.ReadFile(filepath.Join(root, "engine", "CONFORMANCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| ([A-Z]+[0-9]+) \|`)
	tests := map[string]map[string]bool{} // package → test functions
	seen := map[string]bool{}
	for _, line := range strings.Split(string(table), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := m[1]
		cells := strings.Split(strings.TrimSpace(line), "|")
		cells = cells[1 : len(cells)-1]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 5 {
			t.Errorf("%s: %d cells, want 5 (id, requirement, tests, wasm, Durabox)", id, len(cells))
			continue
		}
		if seen[id] {
			t.Errorf("%s: two rows", id)
		}
		seen[id] = true
		named, wasm, durabox := cells[2], cells[3], cells[4]
		refs := testRef.FindAllStringSubmatch(named, -1)
		switch {
		case named == "—":
			if !strings.Contains(durabox, "**n/a**") && !strings.Contains(durabox, "pending") {
				t.Errorf("%s names no test and does not say why (n/a or pending)", id)
			}
			if wasm != "—" {
				t.Errorf("%s names no test, yet its wasm column says %q", id, wasm)
			}
			continue
		case strings.HasPrefix(named, "pending"):
			continue
		case len(refs) == 0:
			t.Errorf("%s: no test in %q", id, named)
		}
		runsWasm := false
		for _, ref := range refs {
			pkg, name := ref[1], ref[2]
			if tests[pkg] == nil {
				tests[pkg] = testFunctions(t, filepath.Join(root, pkg))
			}
			if !tests[pkg][name] {
				t.Errorf("%s names %s: %s, which %s does not define", id, pkg, name, pkg)
			}
			runsWasm = runsWasm || wasmPackages[pkg]
		}
		switch wasm {
		case "yes":
			if !runsWasm {
				t.Errorf("%s claims a wasm test but names none in %v", id, wasmPackages)
			}
		case "unit":
		default:
			t.Errorf("%s: wasm column %q, want yes or unit", id, wasm)
		}
	}
	if len(seen) < 100 {
		t.Fatalf("read %d rows from engine/CONFORMANCE.md; the table's layout has changed", len(seen))
	}
}

// testFunctions returns the test functions the _test.go files of dir
// define.
func testFunctions(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tests in %s (%v)", dir, err)
	}
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			funcs[m[1]] = true
		}
	}
	return funcs
}
