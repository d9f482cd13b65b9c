package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/serving"
)

var versionCommand = &command{
	name:     "version",
	synopsis: "[--host]",
	summary:  "print what durabox, or the host, was built from",
	about: "Print what this durabox was built from: the durabox module's version (a tag,\n" +
		"or (devel) for a build from a checkout, with its commit when go build recorded\n" +
		"it), the Go version, the ABI version a module must export, the WebAssembly\n" +
		"runtimes linked in, and the store schema versions it writes (a database of a\n" +
		"newer one is refused, an older one migrated). With --host, print the same of\n" +
		"the host at --addr instead (GET /v1/version).",
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		ofHost := fs.Bool("host", false, "print the version of the host at --addr, not this durabox's")
		return func(ctx context.Context, e *env) error {
			v := serving.Version()
			if *ofHost {
				var err error
				if v, err = e.client.Version(ctx); err != nil {
					return err
				}
			}
			if e.json {
				return printJSON(e.stdout, v)
			}
			return printVersion(e, v)
		}
	},
}

func printVersion(e *env, v api.Version) error {
	durabox := v.Durabox
	switch {
	case v.Revision != "" && v.Modified:
		durabox += " (commit " + v.Revision + ", modified)"
	case v.Revision != "":
		durabox += " (commit " + v.Revision + ")"
	}
	tw := newTable(e.stdout)
	fmt.Fprintf(tw, "durabox\t%s\n", durabox)
	fmt.Fprintf(tw, "go\t%s\n", v.Go)
	fmt.Fprintf(tw, "abi\t%d\n", v.ABI)
	for _, name := range slices.Sorted(maps.Keys(v.Runtimes)) {
		fmt.Fprintf(tw, "%s\t%s\n", name, v.Runtimes[name])
	}
	var schemas []string
	for _, name := range slices.Sorted(maps.Keys(v.Schemas)) {
		schemas = append(schemas, fmt.Sprintf("%s %d", name, v.Schemas[name]))
	}
	fmt.Fprintf(tw, "schemas\t%s\n", strings.Join(schemas, ", "))
	return tw.Flush()
}
