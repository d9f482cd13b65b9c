package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/durabox/durabox/host/client"
)

var auditCommand = &command{
	name:     "audit",
	synopsis: "[--token NAME] [--action ACTION] [--target ID] [--since T] [flags]",
	summary:  "list who changed what through the API, and when",
	about: "List the host's audit log, newest first, a page at a time: every change made\n" +
		"through the API (deploy, modules rm, start, raise, update, cancel, terminate,\n" +
		"reset, upgrade, purge, and each change of a schedule), with the name and role\n" +
		"of the token that asked, the target (an instance id, a module hash, a\n" +
		"schedule), the outcome (ok, refused, failed), the status and what the change\n" +
		"was. Requests refused for their token's role are there too; those without a\n" +
		"token the host accepts are only in the host's log. It needs the admin token.\n" +
		"serve's --retention deletes records older than the retention.",
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var req client.AuditRequest
		var since timeFlag
		fs.StringVar(&req.Token, "token", "", "only the changes of the token named `NAME`")
		fs.StringVar(&req.Action, "action", "", "only the changes of `ACTION`: deploy, remove-module, start, raise, update, cancel, terminate, reset, upgrade, purge, schedule-create, schedule-pause, schedule-resume, schedule-trigger, schedule-delete, batch or batch-stop")
		fs.StringVar(&req.Target, "target", "", "only the changes of `TARGET`: an instance id, a module hash, a schedule's name")
		fs.Var(&since, "since", "only the changes at or after `T`: "+timeHelp)
		wholeVar(fs, &req.Limit, "limit", 100, span{min: 1, max: 1000}, "list at most `N` records, 1 to 1000")
		wholeVar(fs, &req.Before, "before", 0, span{min: 1, max: 1 << 62, orZero: true, note: "0, the default, starts from the newest"}, "list the page after the one that gave `ID`")
		return func(ctx context.Context, e *env) error {
			req.Since = since.t
			return audit(ctx, e, req)
		}
	},
}

func audit(ctx context.Context, e *env, req client.AuditRequest) error {
	page, err := e.client.Audit(ctx, req)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, page)
	}
	if len(page.Records) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no changes recorded")
		return err
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "TIME\tTOKEN\tROLE\tACTION\tTARGET\tOUTCOME\tDETAIL")
	for _, r := range page.Records {
		target := r.Target
		if target == "" {
			target = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", timeText(r.Time), r.Token, r.Role, r.Action, target, r.Outcome+" "+strconv.Itoa(r.Status), r.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.Next != 0 {
		_, err = fmt.Fprintf(e.stdout, "more: run the same command with --before %d\n", page.Next)
	}
	return err
}
