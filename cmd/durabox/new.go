package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"unicode"

	"golang.org/x/mod/module"
)

var newCommand = &command{
	name:     "new",
	synopsis: "DIR [--name NAME] [--module PATH] [--sdk DIR]",
	summary:  "start a project: a module, its tests, a README",
	about: "Write a new Go project into DIR (which must not exist, or be empty): go.mod,\n" +
		"a main.go with the orchestration NAME and an activity, a main_test.go that\n" +
		"runs them with the SDK's test kit, and a README with the commands of an\n" +
		"author's loop. go test ./... passes in it at once, and durabox build builds\n" +
		"it. Durabox is not published as Go modules: go.mod takes the SDK's module\n" +
		"(and the two it needs, abi and engine) from a Durabox source tree through\n" +
		"replace directives: --sdk DIR, else $DURABOX_SDK, else the source tree this\n" +
		"durabox was built from. The project requires none of the host's modules.",
	args: []string{"DIR"},
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var p project
		fs.StringVar(&p.Name, "name", "", "the orchestration's `NAME`, an exported Go identifier (default: from DIR's name, such as Orders for orders)")
		fs.StringVar(&p.Module, "module", "", "the project's Go module `PATH` (default: DIR's name)")
		fs.StringVar(&p.SDK, "sdk", "", "the Durabox source tree `DIR` to build against (default $DURABOX_SDK, else the tree this durabox was built from)")
		return func(_ context.Context, e *env) error { return newProject(e, e.args[0], p) }
	},
}

// project is what the templates of a new project are filled with.
type project struct {
	// Name is the orchestration's name; Module, the project's module path;
	// Package, the last element of DIR; Wasm, the module file durabox
	// build writes.
	Name, Module, Package, Wasm string
	// SDK is the absolute path of the Durabox source tree; Go, the Go
	// version the SDK's go.mod requires.
	SDK, Go string
	// Local are the modules the project takes from the tree: the SDK's,
	// and those the SDK takes from beside it (replace directives apply
	// only in the main module, so the project repeats them).
	Local []local
	// needs are the modules the SDK requires, which the project requires
	// too (indirect), as Go's pruned module graph wants.
	needs []module.Version
}

//go:embed newproject
var templates embed.FS

// files are the files of a new project and the templates they come from
// (go.mod is written apart).
var files = []struct{ name, template string }{
	{"main.go", "main.go.tmpl"},
	{"main_test.go", "main_test.go.tmpl"},
	{"README.md", "README.md.tmpl"},
	{".gitignore", "gitignore.tmpl"},
}

func newProject(e *env, dir string, p project) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("durabox new: %w", err)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return fmt.Errorf("durabox new: %s already exists and is not empty; name a new directory", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("durabox new: %w", err)
	}
	p.Package, p.Wasm = filepath.Base(abs), wasmName(abs)
	if err := p.complete(); err != nil {
		return err
	}
	out := map[string][]byte{}
	if out["go.mod"], err = p.goMod(); err != nil {
		return err
	}
	for _, f := range files {
		var b bytes.Buffer
		t := template.Must(template.ParseFS(templates, "newproject/"+f.template))
		if err := t.Execute(&b, p); err != nil {
			return fmt.Errorf("durabox new: %s: %w", f.name, err)
		}
		out[f.name] = b.Bytes()
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("durabox new: %w", err)
	}
	written := []string{"go.mod"}
	for _, f := range files {
		written = append(written, f.name)
	}
	for _, name := range written {
		if err := os.WriteFile(filepath.Join(abs, name), out[name], 0o644); err != nil {
			return fmt.Errorf("durabox new: %w", err)
		}
	}
	_, err = fmt.Fprintf(e.stdout, `created %s: %s
(module %s, orchestration %s, the SDK from %s)
next:
  cd %s
  go test ./...
  durabox build
  durabox serve --db durabox.db &
  durabox deploy %s
  durabox start %s --input '"world"' --wait
`, dir, strings.Join(written, " "), p.Module, p.Name, p.SDK, shellQuote(dir), shellQuote(p.Wasm), p.Name)
	return err
}

// complete fills in and checks the project's name, module path and SDK.
func (p *project) complete() error {
	if p.Name == "" {
		p.Name = identifier(p.Package)
		if p.Name == "" {
			return usagef("cannot make an orchestration name from %q; give one with --name", p.Package)
		}
	}
	if !token.IsIdentifier(p.Name) || !token.IsExported(p.Name) {
		return usagef("--name %q is not an exported Go identifier (a capital letter, then letters, digits or _), such as Orders", p.Name)
	}
	if p.Name == "SayHello" {
		return usagef("--name SayHello is the name of the project's activity; choose another")
	}
	if p.Module == "" {
		p.Module = p.Package
	}
	if err := module.CheckImportPath(p.Module); err != nil {
		return usagef("%q is not a Go module path (%v); give one with --module, such as example.com/orders", p.Module, err)
	}
	return p.findSDK()
}

// identifier makes an exported Go identifier from a directory's name:
// orders becomes Orders, order-flow OrderFlow; "" if nothing is left.
func identifier(s string) string {
	var b strings.Builder
	upper := true
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			upper = true
		case b.Len() == 0 && !unicode.IsLetter(r):
		case upper:
			b.WriteRune(unicode.ToUpper(r))
			upper = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
