package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/durabox/durabox/host/api"
)

var upgradeCommand = &command{
	name:     "upgrade",
	synopsis: "FROM [TO] [--dry-run] [--instances IDS] [--parallel N]",
	summary:  "move the open instances of a module to a new one that replays them",
	about: "Replay the history of every open instance of module FROM on module TO, in the\n" +
		"host's sandbox, with no side effects and without touching the instances, and\n" +
		"report each: compatible, diverges (at which event, what history has and what\n" +
		"the new code emitted) or fails (the new code crashes, or lacks an activity the\n" +
		"instance has in flight). Then move exactly the compatible instances to TO, each\n" +
		"move recorded in the instance's history; the others stay on FROM. The host goes\n" +
		"on serving meanwhile; an instance running a turn is tried again once the turn\n" +
		"ends. FROM and TO are module hashes or unique prefixes of them; FROM alone\n" +
		"names an orchestration and means its open instances on every older module,\n" +
		"moved to its newest. On a terminal it shows how far it is.\n\n" +
		"Exit 0 when every instance checked moved (with --dry-run, would move), 3 when\n" +
		"some did not (would not: they diverge, fail or were skipped), 1 when the\n" +
		"upgrade could not run.",
	args:     []string{"FROM"},
	optional: []string{"TO"},
	client:   true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		dryRun := fs.Bool("dry-run", false, "report what would move, and move nothing")
		instances := fs.String("instances", "", "upgrade only the instances `IDS`, comma-separated, each one the upgrade would check (default: all)")
		var parallel int
		wholeVar(fs, &parallel, "parallel", 0, span{max: math.MaxInt64, note: "0, the default, is one per CPU of the host"}, "replay `N` instances at once (default: one per CPU of the host)")
		return func(ctx context.Context, e *env) error {
			req := api.UpgradeRequest{From: e.args[0], DryRun: *dryRun, Parallel: parallel}
			if len(e.args) > 1 {
				req.To = e.args[1]
			}
			for _, id := range strings.Split(*instances, ",") {
				if id = strings.TrimSpace(id); id != "" {
					req.Instances = append(req.Instances, id)
				}
			}
			return upgrade(ctx, e, req)
		}
	},
}

func upgrade(ctx context.Context, e *env, req api.UpgradeRequest) error {
	var p *progress
	if !e.json && isTerminal(e.stderr) {
		p = &progress{w: e.stderr}
	}
	report, err := e.client.Upgrade(ctx, req, p.update)
	p.clear()
	if err != nil {
		return err
	}
	if e.json {
		err = printJSON(e.stdout, report)
	} else {
		err = printUpgrade(e, report)
	}
	if err != nil {
		return err
	}
	if s := report.Summary; s.Diverges+s.Fails+s.Skipped > 0 {
		verb := "did not move"
		if report.Plan.DryRun {
			verb = "would not move"
		}
		return exitError{code: 3, msg: fmt.Sprintf("durabox upgrade: %d of %s %s", s.Diverges+s.Fails+s.Skipped, counted(len(report.Results), "instance"), verb)}
	}
	return nil
}

// printUpgrade prints an upgrade's report for people: the plan, a line per
// instance (with the module it was on, when there were several), and the
// summary.
func printUpgrade(e *env, report api.UpgradeReport) error {
	plan := report.Plan
	mode := ""
	if plan.DryRun {
		mode = ", dry run"
	}
	fmt.Fprintf(e.stdout, "upgrade %s → %s (%s)%s: %s\n", shortHashes(plan.From), shortHash(plan.To), strings.Join(plan.Orchestrations, ", "), mode, counted(plan.Instances, "open instance"))
	results := slices.Clone(report.Results)
	slices.SortFunc(results, func(a, b api.UpgradeResult) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	if len(results) > 0 {
		several := len(plan.From) > 1
		tw := newTable(e.stdout)
		if several {
			fmt.Fprint(tw, "INSTANCE\tFROM\tOUTCOME\tEVENTS\tDETAILS\n")
		} else {
			fmt.Fprint(tw, "INSTANCE\tOUTCOME\tEVENTS\tDETAILS\n")
		}
		for _, r := range results {
			details := r.Reason
			if r.Divergence != nil {
				details = r.Divergence.Message
			}
			fmt.Fprint(tw, r.InstanceID)
			if several {
				fmt.Fprintf(tw, "\t%s", shortHash(r.From))
			}
			fmt.Fprintf(tw, "\t%s\t%d", r.Outcome, r.Events)
			if details != "" {
				fmt.Fprintf(tw, "\t%s", details)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	_, err := fmt.Fprintln(e.stdout, summaryText(report))
	return err
}

// summaryText says what an upgrade did, in a sentence.
func summaryText(r api.UpgradeReport) string {
	s := r.Summary
	var parts []string
	for _, c := range []struct {
		n    int
		text string
	}{
		{s.Compatible, "compatible"},
		{s.Moved, "moved to " + shortHash(r.Plan.To)},
		{s.Diverges, "diverge"},
		{s.Fails, "fail"},
		{s.Skipped, "skipped"},
	} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.text))
		}
	}
	text := counted(r.Plan.Instances, "instance")
	if len(parts) > 0 {
		text += ": " + strings.Join(parts, ", ")
	}
	var stayOn []string
	for _, from := range r.Plan.From {
		if slices.ContainsFunc(r.Results, func(res api.UpgradeResult) bool { return res.From == from && !moves(res.Outcome) }) {
			stayOn = append(stayOn, from)
		}
	}
	switch stay := s.Diverges + s.Fails + s.Skipped; {
	case r.Plan.DryRun:
		text += ". Dry run: nothing moved."
	case stay == 1:
		text += fmt.Sprintf(". 1 instance stays on %s.", shortHashes(stayOn))
	case stay > 1:
		text += fmt.Sprintf(". %d instances stay on %s.", stay, shortHashes(stayOn))
	default:
		text += "."
	}
	return text
}

// moves reports whether an outcome moves the instance, or would.
func moves(outcome string) bool {
	return outcome == api.UpgradeMoved || outcome == api.UpgradeCompatible
}

// shortHashes abbreviates module hashes for people: "3f2a9c1b0d4e, 9c1b…".
func shortHashes(hashes []string) string {
	short := make([]string, len(hashes))
	for i, h := range hashes {
		short[i] = shortHash(h)
	}
	return strings.Join(short, ", ")
}

// counted says how many of noun there are: "1 instance", "2 instances",
// "2 activities".
func counted(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// progress shows an upgrade's running count on a terminal, on one line
// that it rewrites. A nil progress shows nothing.
type progress struct {
	w     io.Writer
	shown bool
	total int
	done  api.UpgradeSummary
	n     int
}

func (p *progress) update(line api.UpgradeLine) {
	if p == nil {
		return
	}
	switch {
	case line.Plan != nil:
		p.total = line.Plan.Instances
	case line.Result != nil:
		p.n++
		p.done.Add(line.Result.Outcome)
	default:
		return
	}
	s := p.done
	p.shown = true
	fmt.Fprintf(p.w, "\r\033[Kupgrade: %d/%d replayed: %d fit (%d moved), %d diverge, %d fail, %d skipped",
		p.n, p.total, s.Compatible+s.Moved, s.Moved, s.Diverges, s.Fails, s.Skipped)
}

// clear erases the progress line.
func (p *progress) clear() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
