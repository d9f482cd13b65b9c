package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// TestTestsRunInParallel: every test function, in every module, either
// calls t.Parallel first, so that go test runs it beside the others, or
// says in its doc comment why it cannot ("Not parallel: it sets
// $DURABOX_ADDR."): t.Setenv and t.Chdir refuse a parallel test, and a
// test that changes what other tests read must run alone.
func TestTestsRunInParallel(t *testing.T) {
	t.Parallel()
	root := guestbuild.Root()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if e.IsDir() && path != root && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".")) {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, name := range serialTests(file) {
			t.Errorf("%s: %s neither calls t.Parallel() first nor says in its doc comment why it cannot (// Not parallel: …)", rel, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serialTests returns the test functions of file that neither call
// Parallel on their *testing.T first nor say "Not parallel: " in their
// doc comment.
func serialTests(file *ast.File) []string {
	var names []string
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
			continue
		}
		param := testingT(fn)
		if param == "" || startsParallel(fn, param) || strings.Contains(fn.Doc.Text(), "Not parallel: ") {
			continue
		}
		names = append(names, fn.Name.Name)
	}
	return names
}

// testingT returns the name of fn's one parameter if it is a *testing.T,
// else "".
func testingT(fn *ast.FuncDecl) string {
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) != 1 {
		return ""
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return ""
	}
	if sel, ok := star.X.(*ast.SelectorExpr); !ok || sel.Sel.Name != "T" {
		return ""
	}
	return params[0].Names[0].Name
}

// startsParallel reports whether fn's first statement is t.Parallel(),
// t being its parameter.
func startsParallel(fn *ast.FuncDecl, t string) bool {
	if len(fn.Body.List) == 0 {
		return false
	}
	stmt, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := stmt.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Parallel" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == t
}
