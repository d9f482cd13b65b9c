// Command scratch has activities that use their attempt's scratch
// directory. Files writes, reads back, lists, renames and removes files
// there, and tries to reach past it; Fill writes until its budget
// refuses; Hang writes a file and hangs past its deadline; Where asks
// for the directory.
// Twice calls Files twice, so that the second attempt shows it starts
// empty; Peek is an orchestration that tries to open a file itself.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// Report is what Files saw.
type Report struct {
	// Before lists the directory as the attempt found it; After once it
	// wrote its files.
	Before, After []string
	// Read is what it read back from the file it wrote.
	Read string
	// Escapes are the errors of its tries to reach outside the directory.
	Escapes []string
}

func init() {
	durabox.RegisterActivity("Files", func(ctx context.Context, _ struct{}) (Report, error) {
		dir, err := durabox.ScratchDir(ctx)
		if err != nil {
			return Report{}, err
		}
		var r Report
		if r.Before, err = list(dir); err != nil {
			return r, err
		}
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello, scratch"), 0o600); err != nil {
			return r, err
		}
		b, err := os.ReadFile(filepath.Join(dir, "a.txt"))
		if err != nil {
			return r, err
		}
		r.Read = string(b)
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
			return r, err
		}
		f, err := os.CreateTemp(filepath.Join(dir, "sub"), "part-*.csv")
		if err != nil {
			return r, err
		}
		if _, err := f.WriteString("1,2,3\n"); err != nil {
			return r, err
		}
		if err := f.Close(); err != nil {
			return r, err
		}
		if err := os.Rename(f.Name(), filepath.Join(dir, "sub", "part.csv")); err != nil {
			return r, err
		}
		if err := os.WriteFile(filepath.Join(dir, "gone"), []byte("x"), 0o600); err != nil {
			return r, err
		}
		if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
			return r, err
		}
		if r.After, err = list(dir); err != nil {
			return r, err
		}
		for _, try := range []func() error{
			func() error { _, err := syscall.Openat(3, "../outside", syscall.O_RDONLY, 0); return err },
			func() error { _, err := syscall.Openat(3, "sub/../../outside", syscall.O_RDONLY, 0); return err },
			func() error { _, err := syscall.Openat(3, "/etc/hostname", syscall.O_RDONLY, 0); return err },
			func() error { _, err := os.ReadFile("/etc/hostname"); return err },
		} {
			r.Escapes = append(r.Escapes, fmt.Sprint(try()))
		}
		return r, nil
	})
	// Fill writes 1 MiB at a time to one file until a write fails, and
	// fails with that error.
	durabox.RegisterActivity("Fill", func(ctx context.Context, _ struct{}) (string, error) {
		dir, err := durabox.ScratchDir(ctx)
		if err != nil {
			return "", err
		}
		f, err := os.Create(filepath.Join(dir, "big"))
		if err != nil {
			return "", err
		}
		defer f.Close()
		chunk := make([]byte, 1<<20)
		for written := 0; ; written++ {
			if _, err := f.Write(chunk); err != nil {
				return "", fmt.Errorf("after %d MiB: %w", written, err)
			}
		}
	})
	// Hang writes a file and never returns.
	durabox.RegisterActivity("Hang", func(ctx context.Context, _ struct{}) (string, error) {
		if err := os.WriteFile("/scratch/left", []byte("behind"), 0o600); err != nil {
			return "", err
		}
		for {
			time.Sleep(time.Hour)
		}
	})
	durabox.RegisterActivity("Where", func(ctx context.Context, _ struct{}) (string, error) {
		dir, err := durabox.ScratchDir(ctx)
		if err != nil {
			return err.Error(), nil
		}
		return dir, nil
	})
	durabox.RegisterOrchestration("Twice", func(ctx *durabox.Context, _ struct{}) ([]Report, error) {
		first, err := durabox.Call[Report](ctx, "Files", struct{}{})
		if err != nil {
			return nil, err
		}
		second, err := durabox.Call[Report](ctx, "Files", struct{}{})
		return []Report{first, second}, err
	})
	durabox.RegisterOrchestration("Fill", func(ctx *durabox.Context, _ struct{}) (string, error) {
		return durabox.Call[string](ctx, "Fill", struct{}{})
	})
	durabox.RegisterOrchestration("Hang", func(ctx *durabox.Context, _ struct{}) (string, error) {
		return durabox.Call[string](ctx, "Hang", struct{}{}, durabox.WithTimeout(time.Second))
	})
	durabox.RegisterOrchestration("Where", func(ctx *durabox.Context, _ struct{}) (string, error) {
		return durabox.Call[string](ctx, "Where", struct{}{})
	})
	// Peek opens a file in the orchestration itself, which has none.
	durabox.RegisterOrchestration("Peek", func(ctx *durabox.Context, _ struct{}) (string, error) {
		_, err := os.ReadFile("/scratch/a.txt")
		_, statErr := os.Stat("/scratch")
		return fmt.Sprintf("%v; %v", err, statErr), nil
	})
}

// list lists dir and what its directories hold, as slash-separated
// paths.
func list(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

func main() {}
