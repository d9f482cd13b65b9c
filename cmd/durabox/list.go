package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
)

var listCommand = &command{
	name:     "list",
	synopsis: "[--status STATUS] [--limit N] [flags]",
	summary:  "list the instances",
	about: "List the instances the flags select (every one, without flags), newest first,\n" +
		"a page at a time: when there are more, it says how to ask for the next page.",
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var filter filterFlags
		filter.define(fs)
		var limit int
		wholeVar(fs, &limit, "limit", 100, span{min: 1, max: 1000}, "list at most `N` instances, 1 to 1000")
		cursor := fs.String("cursor", "", "list the page after the one that gave `CURSOR`")
		var stalledFor time.Duration
		durationVar(fs, &stalledFor, "stalled-for", "", "only instances not finished that no turn changed for `D` or longer, such as 10m (by the host's clock)")
		var waiting waitKindFlag
		fs.Var(&waiting, "waiting-on", "only instances not finished that wait on `KIND` (activity, timer, event, update, child); repeat it, or separate with commas, for any of several")
		return func(ctx context.Context, e *env) error {
			f, err := filter.filter(ctx, e)
			if err != nil {
				return err
			}
			return list(ctx, e, client.ListRequest{Filter: f, Limit: limit, Cursor: *cursor, StalledFor: stalledFor, WaitingOn: waiting})
		}
	},
}

func list(ctx context.Context, e *env, req client.ListRequest) error {
	page, err := e.client.List(ctx, req)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, page)
	}
	if len(page.Instances) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no instances")
		return err
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tCREATED\tUPDATED")
	for _, inst := range page.Instances {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inst.ID, inst.Name, inst.Status, timeText(inst.CreatedAt), timeText(inst.UpdatedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.Next != "" {
		_, err = fmt.Fprintf(e.stdout, "more: run the same command with --cursor %s\n", page.Next)
	}
	return err
}

// waitKindFlag collects --waiting-on flags, each one kind of wait or
// several separated by commas.
type waitKindFlag []engine.WaitKind

func (f *waitKindFlag) String() string {
	var s []string
	for _, k := range *f {
		s = append(s, string(k))
	}
	return strings.Join(s, ",")
}

func (f *waitKindFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		k := engine.WaitKind(strings.ToLower(strings.TrimSpace(s)))
		if !slices.Contains(engine.WaitKinds(), k) {
			all := waitKindFlag(engine.WaitKinds())
			return usagef("%q is not a kind of wait; it is one of %s", s, all.String())
		}
		*f = append(*f, k)
	}
	return nil
}
