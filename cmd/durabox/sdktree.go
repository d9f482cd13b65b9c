package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// sdkModule is the module path of the SDK, the one module of Durabox's a
// project requires, and sdkDir its directory in a Durabox source tree.
const (
	sdkModule = "github.com/durabox/durabox/guest-sdk"
	sdkDir    = "guest-sdk"
)

// unpublished is the version a module required only through a replace
// directive carries, by Go's convention.
const unpublished = "v0.0.0-00010101000000-000000000000"

// local is a module a project takes from a directory of the Durabox source
// tree: Path, its module path; Dir, its directory in the tree.
type local struct{ Path, Dir string }

// findSDK sets p.SDK to the Durabox source tree --sdk names, else
// $DURABOX_SDK, else the one this binary was built from, and reads the
// SDK's go.mod in it.
func (p *project) findSDK() error {
	from := "--sdk"
	if p.SDK == "" {
		from, p.SDK = "$DURABOX_SDK", os.Getenv("DURABOX_SDK")
	}
	if p.SDK == "" {
		// This file's path as the compiler saw it: absolute, unless the
		// binary was built with -trimpath.
		_, file, _, _ := runtime.Caller(0)
		if !filepath.IsAbs(file) {
			return errors.New("durabox new: this durabox does not know where the Durabox source tree is (it was built with -trimpath); give it with --sdk DIR or $DURABOX_SDK")
		}
		from, p.SDK = "the source tree this durabox was built from", filepath.Join(filepath.Dir(file), "..", "..")
	}
	sdk, err := filepath.Abs(p.SDK)
	if err != nil {
		return fmt.Errorf("durabox new: %w", err)
	}
	p.SDK = sdk
	return p.readSDK(from)
}

// readSDK sets p.Go, p.Local and p.needs from the go.mod of the SDK in the
// tree p.SDK, which was found as from says.
func (p *project) readSDK(from string) error {
	raw, err := os.ReadFile(filepath.Join(p.SDK, sdkDir, "go.mod"))
	if err != nil {
		return fmt.Errorf("durabox new: %s (%s) is not a Durabox source tree: %w; give one with --sdk DIR or $DURABOX_SDK", p.SDK, from, err)
	}
	f, err := modfile.Parse("go.mod", raw, nil)
	if err != nil || f.Module == nil || f.Module.Mod.Path != sdkModule || f.Go == nil {
		return fmt.Errorf("durabox new: %s (%s) is not a Durabox source tree: its %s/go.mod is not that of %s; give one with --sdk DIR or $DURABOX_SDK", p.SDK, from, sdkDir, sdkModule)
	}
	p.Go = f.Go.Version
	p.Local = []local{{sdkModule, sdkDir}}
	for _, r := range f.Replace {
		if modfile.IsDirectoryPath(r.New.Path) {
			p.Local = append(p.Local, local{r.Old.Path, filepath.ToSlash(filepath.Join(sdkDir, r.New.Path))})
		}
	}
	for _, r := range f.Require {
		p.needs = append(p.needs, r.Mod)
	}
	return nil
}

// goMod returns the project's go.mod, as go mod tidy would write it: its
// module, the SDK's Go version, the SDK and the modules it needs, each taken
// from the source tree.
func (p *project) goMod() ([]byte, error) {
	f := &modfile.File{}
	errs := []error{f.AddModuleStmt(p.Module), f.AddGoStmt(p.Go)}
	requires := []*modfile.Require{{Mod: module.Version{Path: sdkModule, Version: unpublished}}}
	for _, m := range p.needs {
		requires = append(requires, &modfile.Require{Mod: m, Indirect: true})
	}
	f.SetRequireSeparateIndirect(requires)
	for _, m := range p.Local {
		errs = append(errs, f.AddReplace(m.Path, "", filepath.Join(p.SDK, filepath.FromSlash(m.Dir)), ""))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("durabox new: go.mod: %w", err)
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}
