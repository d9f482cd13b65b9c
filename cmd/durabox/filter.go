package main

import (
	"context"
	"flag"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
)

// filterFlags are the flags that select instances, for list and purge.
type filterFlags struct {
	statuses                    statusFlag
	name, module, idPrefix      string
	parent                      string
	createdAfter, createdBefore timeFlag
	finishedBefore              timeFlag
	where                       string
}

// define defines the flags in fs.
func (f *filterFlags) define(fs *flag.FlagSet) {
	fs.Var(&f.statuses, "status", "only instances with `STATUS` (Pending, Running, Completed, Failed, Canceled, Terminated); repeat it, or separate with commas, for several")
	fs.StringVar(&f.name, "name", "", "only instances of the orchestration `NAME`")
	fs.StringVar(&f.module, "module", "", "only instances that run on the module `HASH` (its first digits will do)")
	fs.StringVar(&f.idPrefix, "id-prefix", "", "only instances whose id begins with `PREFIX`")
	fs.StringVar(&f.parent, "parent", "", "only the instances the instance `ID` started")
	fs.Var(&f.createdAfter, "created-after", "only instances created at or after `T`: "+timeHelp)
	fs.Var(&f.createdBefore, "created-before", "only instances created before `T`")
	fs.Var(&f.finishedBefore, "before", "only instances that finished before `T`")
	fs.StringVar(&f.where, "where", "", "only instances the filter `EXPR` holds for, on search attributes and status, name, id, created, updated\n"+
		"(docs/filters.md): 'customer = \"c-42\" AND amount > 100'")
}

// set reports whether any flag selects something.
func (f *filterFlags) set() bool {
	return len(f.statuses) > 0 || f.name != "" || f.module != "" || f.idPrefix != "" || f.parent != "" ||
		!f.createdAfter.t.IsZero() || !f.createdBefore.t.IsZero() || !f.finishedBefore.t.IsZero() || f.where != ""
}

// filter returns the client's filter, with --module's hash in full.
func (f *filterFlags) filter(ctx context.Context, e *env) (client.Filter, error) {
	out := client.Filter{Statuses: f.statuses, Name: f.name, IDPrefix: f.idPrefix, Parent: f.parent,
		CreatedAfter: f.createdAfter.t, CreatedBefore: f.createdBefore.t, FinishedBefore: f.finishedBefore.t, Where: f.where}
	if f.module != "" {
		m, err := findModule(ctx, e, "--module", f.module)
		if err != nil {
			return out, err
		}
		out.Module = m.Hash
	}
	return out, nil
}

// statusFlag collects --status flags, each one status or several
// separated by commas.
type statusFlag []engine.Status

func (f *statusFlag) String() string {
	var s []string
	for _, st := range *f {
		s = append(s, string(st))
	}
	return strings.Join(s, ",")
}

func (f *statusFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		st, ok := statusNamed(strings.TrimSpace(s))
		if !ok {
			all := statusFlag(engine.Statuses())
			return usagef("%q is not a status; it is one of %s", s, all.String())
		}
		*f = append(*f, st)
	}
	return nil
}

// statusNamed returns the status called name, in any case.
func statusNamed(name string) (engine.Status, bool) {
	for _, s := range engine.Statuses() {
		if strings.EqualFold(string(s), name) {
			return s, true
		}
	}
	return "", false
}

// timeHelp says what a timeFlag takes.
const timeHelp = "a time (2026-01-02T15:04:05Z), a date (2026-01-02, in UTC), or a duration ago (24h)"

// timeFlag is a time given as RFC 3339, a date, or a duration before now.
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string {
	if f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f *timeFlag) Set(v string) error {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		f.t = t
		return nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		f.t = t
		return nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		f.t = time.Now().Add(-d)
		return nil
	}
	return usagef("%q is not %s", v, timeHelp)
}
