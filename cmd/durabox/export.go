package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/durabox/durabox/host/bundle"
)

var exportCommand = &command{
	name:     "export",
	synopsis: "ID [-o FILE]",
	summary:  "write an instance's repro bundle",
	about: "Write the repro bundle of the instance ID to FILE (default ID.dbx): one file with\n" +
		"the module it runs on, the history of every execution, its input and each\n" +
		"execution's random seed. durabox replay FILE replays it on any machine, with no\n" +
		"host and no database. The format is specified in host/bundle/FORMAT.md. FILE\n" +
		"holds what the database holds, so it is readable by its owner only, as the\n" +
		"database is.",
	args:   []string{"ID"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		out := fs.String("o", "", "write the bundle to `FILE` (default ID.dbx)")
		return func(ctx context.Context, e *env) error {
			file := *out
			if file == "" {
				file = e.args[0] + ".dbx"
			}
			return export(ctx, e, file)
		}
	},
}

// exported is what durabox export --json prints.
type exported struct {
	File       string `json:"file"`
	Bytes      int    `json:"bytes"`
	InstanceID string `json:"instanceId"`
	Module     string `json:"module"`
	Executions int    `json:"executions"`
	Events     int    `json:"events"`
}

func export(ctx context.Context, e *env, file string) error {
	raw, err := e.client.Export(ctx, e.args[0])
	if err != nil {
		return err
	}
	// Read it back before writing it: a bundle cut short on the way is
	// refused here, not when someone needs it.
	b, err := bundle.Read(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return fmt.Errorf("durabox export: the host's answer: %w", err)
	}
	if err := writeOwnerOnly(file, raw); err != nil {
		return fmt.Errorf("durabox export: %w", err)
	}
	x := exported{File: file, Bytes: len(raw), InstanceID: b.InstanceID, Module: b.ModuleHash, Executions: len(b.Executions)}
	for _, ex := range b.Executions {
		x.Events += len(ex.History)
	}
	if e.json {
		return printJSON(e.stdout, x)
	}
	_, err = fmt.Fprintf(e.stdout, "exported %s (%s, %s): %s, %s, module %s, to %s (%d KiB)\nreplay it anywhere with: durabox replay %s\n",
		b.InstanceID, b.Name, b.Status, counted(x.Executions, "execution"), counted(x.Events, "event"), shortHash(b.ModuleHash), file, (len(raw)+1023)/1024, shellQuote(file))
	return err
}

// writeOwnerOnly writes data to file, readable and writable by its owner
// only (a bundle holds what the database holds), whatever the umask and
// whatever mode a file it replaces had. It writes a temporary file beside
// it and renames it into place, so that a write cut short leaves file as
// it was.
func writeOwnerOnly(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // its path is the temporary file's pattern
		}
		return fmt.Errorf("write %s: %w", file, err)
	}
	_, err = tmp.Write(data)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
