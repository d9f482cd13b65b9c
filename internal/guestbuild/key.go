package guestbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// buildEnv are the go env settings a guest's build depends on besides its
// files: the toolchain (whose standard library it links), the flags and
// experiments, the workspace, and where sources are (the build keeps
// their paths).
var buildEnv = []string{"GOVERSION", "GOROOT", "GOFLAGS", "GOWASM", "GOEXPERIMENT", "GOWORK", "GOMODCACHE"}

// listed is what go list says of one package a guest's build compiles.
type listed struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct{ GoMod string }
	GoFiles    []string
	SFiles     []string
	SysoFiles  []string
	EmbedFiles []string
}

// key returns the cache key of Command(dir, pkg, out, vars...) for any
// out: a hash of the command's arguments and directory, the go env
// settings in buildEnv, and every file of every package the build
// compiles outside the standard library, with the go.mod and go.sum of
// each module they belong to. The standard library is named by the
// toolchain's version and GOROOT.
func key(dir, pkg string, vars []string) (string, error) {
	cmd := Command(dir, pkg, "", vars...)
	h := sha256.New()
	field(h, cmd.Dir)
	for _, a := range cmd.Args {
		field(h, a)
	}
	env, err := goOutput(cmd, append([]string{"env"}, buildEnv...)...)
	if err != nil {
		return "", err
	}
	field(h, string(env))
	pkgs, err := deps(cmd, pkg)
	if err != nil {
		return "", err
	}
	mods := map[string]bool{}
	for _, p := range pkgs {
		if p.Standard {
			continue
		}
		field(h, p.ImportPath)
		for _, f := range slices.Concat(p.GoFiles, p.SFiles, p.SysoFiles, p.EmbedFiles) {
			if err := file(h, filepath.Join(p.Dir, f)); err != nil {
				return "", err
			}
		}
		if p.Module != nil && p.Module.GoMod != "" && !mods[p.Module.GoMod] {
			mods[p.Module.GoMod] = true
			if err := file(h, p.Module.GoMod); err != nil {
				return "", err
			}
			sum := filepath.Join(filepath.Dir(p.Module.GoMod), "go.sum")
			if err := file(h, sum); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// deps lists pkg and every package it imports, for the guest's platform.
func deps(cmd *exec.Cmd, pkg string) ([]listed, error) {
	out, err := goOutput(cmd, "list", "-deps", "-json=ImportPath,Dir,Standard,Module,GoFiles,SFiles,SysoFiles,EmbedFiles", pkg)
	if err != nil {
		return nil, err
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("read go list's output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// goOutput runs the go command with args where cmd runs, with its
// environment, and returns what it prints.
func goOutput(cmd *exec.Cmd, args ...string) ([]byte, error) {
	c := exec.Command("go", args...)
	c.Dir, c.Env = cmd.Dir, cmd.Env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", args[0], err, stderr.Bytes())
	}
	return out, nil
}

// file adds the name and the contents of the file at path to h.
func file(h hash.Hash, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	field(h, path)
	field(h, string(data))
	return nil
}

// field adds s to h, length first, so that no two sequences of fields
// hash alike.
func field(h hash.Hash, s string) {
	fmt.Fprintf(h, "%d:%s", len(s), s)
}
