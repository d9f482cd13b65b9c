package main

import (
	"flag"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/docs"
	"github.com/durabox/durabox/internal/guestbuild"
)

var update = flag.Bool("update", false, "write docs/cli.md's help of every command from durabox help")

// cliPath is the reference of the command line, and the markers around
// the part of it durabox help writes.
const (
	cliPath   = "docs/cli.md"
	helpBegin = "<!-- help: go test ./cmd/durabox -run CLIReference -update writes what follows from durabox help; edit the commands, not this -->\n"
	helpEnd   = "<!-- end of help -->\n"
)

// TestCLIReferenceIsTheHelp: docs/cli.md shows durabox help, and the help
// of every command, as durabox prints them. With -update it writes them.
func TestCLIReferenceIsTheHelp(t *testing.T) {
	t.Parallel()
	var want, overview strings.Builder
	if code := run([]string{"help"}, strings.NewReader(""), &overview, io.Discard); code != 0 {
		t.Fatalf("durabox help: exit code %d", code)
	}
	want.WriteString("```\n$ durabox help\n" + overview.String() + "```\n")
	for _, c := range commands {
		want.WriteString("\n## " + c.name + "\n\n```\n$ durabox help " + c.name + "\n" + usage(t, c.name) + "```\n")
	}
	docs.Section{Path: cliPath, Begin: helpBegin, End: helpEnd}.Check(t, guestbuild.Root(), want.String(), *update)
}

// mapDocs returns the documents a reader walks from README.md, and the
// guides beside the code that name commands, read; the help docs/cli.md
// shows is checked by TestCLIReferenceIsTheHelp, and left out.
func mapDocs(t *testing.T) []*docs.Doc {
	t.Helper()
	root := guestbuild.Root()
	paths, err := docs.Map(root)
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "wasm", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		rel, _ := filepath.Rel(root, e)
		paths = append(paths, filepath.ToSlash(rel))
	}
	paths = append(paths, "guest-sdk/README.md")
	var out []*docs.Doc
	for _, p := range paths {
		d, err := docs.Read(root, p)
		if err != nil {
			t.Fatal(err)
		}
		if p == cliPath {
			before, _, _ := strings.Cut(string(d.Source), helpBegin)
			lines := strings.Count(before, "\n")
			d.Code = slices.DeleteFunc(d.Code, func(c docs.Piece) bool { return c.Block && c.Line > lines })
		}
		out = append(out, d)
	}
	return out
}

// A cliFlag is one flag of one command, with the default durabox help
// gives it.
type cliFlag struct {
	command, name, def string
}

// cliFlags returns every command's flags by name.
func cliFlags(t *testing.T) map[string][]cliFlag {
	t.Setenv("DURABOX_ADDR", "")
	byName := map[string][]cliFlag{}
	for _, c := range commands {
		fs, _, _ := c.flags()
		fs.VisitAll(func(f *flag.Flag) {
			byName[f.Name] = append(byName[f.Name], cliFlag{c.name, f.Name, defaultOf(f)})
		})
	}
	return byName
}

// defaultOf returns a flag's default: its value when unset, unless that
// is a zero that stands for a default its usage gives, "(default X)".
func defaultOf(f *flag.Flag) string {
	if !slices.Contains([]string{"", "0", "0s", "false"}, f.DefValue) {
		return f.DefValue
	}
	if m := usageDefault.FindStringSubmatch(f.Usage); m != nil {
		return m[1]
	}
	return ""
}

var usageDefault = regexp.MustCompile(`\(default:? ([^)]*)\)`)

// has reports whether command has the flag name.
func has(flags map[string][]cliFlag, command, name string) bool {
	return slices.ContainsFunc(flags[name], func(f cliFlag) bool { return f.command == command })
}

var flagToken = regexp.MustCompile(`^-{1,2}([a-z][a-z0-9-]*)`)

// TestDocsNameRealFlags: every flag a document gives a durabox command
// ("durabox serve --db", "serve --lease") is a flag of that command, every
// command it runs is one, and every other flag it names is some command's.
//
// Not parallel: cliFlags clears $DURABOX_ADDR (t.Setenv).
func TestDocsNameRealFlags(t *testing.T) {
	flags := cliFlags(t)
	for _, d := range mapDocs(t) {
		for _, c := range d.Code {
			for _, bad := range checkCommandLine(flags, c.Text) {
				t.Errorf("%s, %s: %s", d.Path, c, bad)
			}
		}
		for _, p := range d.Text {
			for _, m := range proseFlag.FindAllStringSubmatch(withoutCode(p.Text), -1) {
				if len(flags[m[1]]) == 0 {
					t.Errorf("%s, line %d: --%s is no flag of durabox", d.Path, p.Line, m[1])
				}
			}
		}
	}
}

var proseFlag = regexp.MustCompile(`(?:^|[\s(])--([a-z][a-z0-9-]*)`)

// withoutCode returns text without its code spans, which are checked as
// code.
func withoutCode(text string) string {
	return regexp.MustCompile("`[^`]*`").ReplaceAllString(text, "")
}

// checkCommandLine checks a code span or a line of a code block: the
// command "durabox COMMAND" runs is one, the flags that follow it (or
// follow a command's name that begins the span, "serve --lease") are that
// command's, and a flag that follows no command is some command's. A
// command that is not durabox's (make, go, curl) and a shell comment's
// text (checked as prose) are left alone.
func checkCommandLine(flags map[string][]cliFlag, line string) []string {
	line, comment, _ := strings.Cut(line, " #")
	var bad []string
	for _, m := range proseFlag.FindAllStringSubmatch(comment, -1) {
		if len(flags[m[1]]) == 0 {
			bad = append(bad, "--"+m[1]+" is no flag of durabox")
		}
	}
	command, first, named, skip := "", true, false, false
	for _, w := range strings.Fields(line) {
		switch {
		case w == "|" || w == "&&" || w == ";" || w == "&" || w == "\\":
			command, first, named, skip = "", true, false, false
			continue
		case first && (w == "$" || assignment.MatchString(w)):
			continue
		case first && (w == "durabox" || strings.HasSuffix(w, "/durabox")):
			first, named = false, true
			continue
		case first && !strings.HasPrefix(w, "-"):
			first, command, skip = false, w, find(w) == nil
			continue
		case named:
			named, command = false, w
			if find(w) == nil && w != "help" {
				bad = append(bad, "durabox "+w+" is no command of durabox")
			}
			continue
		}
		first = false
		m := flagToken.FindStringSubmatch(strings.TrimLeft(w, "[("))
		switch {
		case m == nil || skip || m[1] == "h" || m[1] == "help":
		case command != "" && !has(flags, command, m[1]):
			bad = append(bad, "durabox "+command+" has no flag "+strings.SplitN(m[0], "=", 2)[0])
		case command == "" && strings.HasPrefix(w, "--") && len(flags[m[1]]) == 0:
			bad = append(bad, "--"+m[1]+" is no flag of durabox")
		}
	}
	return bad
}

var assignment = regexp.MustCompile(`^[A-Z_]+=`)

// TestCommandLinesAreChecked: the check of TestDocsNameRealFlags finds a
// flag a command lacks, a command durabox lacks and a flag no command
// has, and leaves other tools' flags alone.
//
// Not parallel: cliFlags clears $DURABOX_ADDR (t.Setenv).
func TestCommandLinesAreChecked(t *testing.T) {
	flags := cliFlags(t)
	tests := []struct {
		line string
		want []string
	}{
		{"./bin/durabox serve --db durabox.db --addr 0.0.0.0:7070 \\", nil},
		{"$ durabox start Greeting --input '\"world\"' --wait", nil},
		{"DURABOX_TOKEN=$(cat admin.token) ./bin/durabox list --addr https://h:7070 --limit=5", nil},
		{"serve --cache-mib N", nil},
		{"durabox export order-42 -o testdata/order-42.dbx", nil},
		{"--step-budget N", nil},
		{"make crashtest CRASHFLAGS=--seed=42", nil},
		{"GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared --trimpath", nil},
		{"... | durabox start Orders --input -", nil},
		{"./bin/durabox list [--status Running] [--limit 20]", nil},
		{"./bin/durabox raise <id> Approval [--persistent] [--forever]", []string{"durabox raise has no flag --forever"}},
		{"durabox serve --db x --cpu-deadline 5s", []string{"durabox serve has no flag --cpu-deadline"}},
		{"durabox start Greeting --wait --step-timeout=1s", []string{"durabox start has no flag --step-timeout"}},
		{"durabox build -x", []string{"durabox build has no flag -x"}},
		{"durabox launch Greeting", []string{"durabox launch is no command of durabox"}},
		{"upgrade --dry-run --now", []string{"durabox upgrade has no flag --now"}},
		{"--cpu-budget N", []string{"--cpu-budget is no flag of durabox"}},
		{"durabox list   # or --everything", []string{"--everything is no flag of durabox"}},
	}
	for _, tt := range tests {
		if got := checkCommandLine(flags, tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestDocsQuoteFlagDefaults: where a document gives a flag's default
// ("--lease (default 1m)", "--step-timeout, default 5s"), it is the one
// durabox help gives.
//
// Not parallel: cliFlags clears $DURABOX_ADDR (t.Setenv).
func TestDocsQuoteFlagDefaults(t *testing.T) {
	flags := cliFlags(t)
	for _, d := range mapDocs(t) {
		for _, p := range d.Text {
			for _, bad := range checkDefaults(flags, p.Text) {
				t.Errorf("%s, line %d: %s", d.Path, p.Line, bad)
			}
		}
	}
}

// quotedDefault finds a flag and the default a sentence gives it after
// it, with no other flag between them.
var quotedDefault = regexp.MustCompile("--([a-z][a-z0-9-]*)((?:[^-.;]|-[^-])*?)\\bdefault:? ([^ ;)]+(?: [^ ;)]+)?)")

// checkDefaults checks the defaults text gives flags.
func checkDefaults(flags map[string][]cliFlag, text string) []string {
	var bad []string
	for _, m := range quotedDefault.FindAllStringSubmatch(text, -1) {
		name, quoted := m[1], m[3]
		if len(flags[name]) == 0 {
			continue // TestDocsNameRealFlags reports it
		}
		var defaults []string
		ok := slices.ContainsFunc(flags[name], func(f cliFlag) bool {
			if d := strings.TrimSpace(f.def); !slices.Contains(defaults, d) {
				defaults = append(defaults, d)
			}
			return sameDefault(quoted, f.def)
		})
		if !ok {
			bad = append(bad, "gives --"+name+" the default "+quoted+"; durabox help gives "+strings.Join(defaults, " or "))
		}
	}
	return bad
}

// sameDefault reports whether the default a document quotes is the
// flag's, or one of the cases it names ("FILE.wasmcache; on PostgreSQL,
// the user's cache directory"): its first word, or its first two when
// the flag's has more, are words of the flag's default, in order.
func sameDefault(quoted, def string) bool {
	norm := func(s string) []string {
		s = strings.NewReplacer("`", "", "\"", "", ",", "", "'s", "", ";", "").Replace(strings.ToLower(s))
		return strings.Fields(s)
	}
	q, d := norm(quoted), norm(def)
	k := min(2, len(q), len(d))
	for i := 0; k > 0 && i+k <= len(d); i++ {
		if slices.Equal(q[:k], d[i:i+k]) {
			return true
		}
	}
	return false
}

// TestFlagDefaultsAreChecked: the check of TestDocsQuoteFlagDefaults
// finds a default that is not the flag's.
//
// Not parallel: cliFlags clears $DURABOX_ADDR (t.Setenv).
func TestFlagDefaultsAreChecked(t *testing.T) {
	flags := cliFlags(t)
	tests := []struct {
		text string
		want []string
	}{
		{"a step of an orchestration `--step-timeout`, default 5s per step", nil},
		{"for `--lease` (default 1m), and", nil},
		{"past `serve --history-warning` events (default 50,000), the host", nil},
		{"Client commands find the host at `--addr` or `$DURABOX_ADDR` (default `127.0.0.1:7070`; a URL", nil},
		{"`serve --cache-mib N` bounds the memory they hold (default a quarter of the machine's memory)", nil},
		{"`--memory-mib`, default 512 per instance", []string{"gives --memory-mib the default 512 per; durabox help gives 256"}},
		{"`--lease` (default 30s)", []string{"gives --lease the default 30s; durabox help gives 1m"}},
		{"`--cache-mib N` (default half the machine's memory)", []string{"gives --cache-mib the default half the; durabox help gives a quarter of the machine's memory, or of the cgroup's limit"}},
		{"`--step-budget` sets a budget; by default the deadline, `--step-timeout` (5s)", nil},
	}
	for _, tt := range tests {
		if got := checkDefaults(flags, tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestDocsListTheCommands: a list of durabox's commands in a document
// (five or more of their names, `serve`, `deploy`, …) names every command
// and no other.
func TestDocsListTheCommands(t *testing.T) {
	t.Parallel()
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	for _, d := range mapDocs(t) {
		for _, p := range d.Text {
			for _, list := range commandList.FindAllString(p.Text, -1) {
				var listed []string
				for _, m := range listedName.FindAllStringSubmatch(list, -1) {
					listed = append(listed, m[1])
				}
				if n := len(slices.DeleteFunc(slices.Clone(listed), func(w string) bool { return find(w) == nil })); n < 5 {
					continue
				}
				if missing, extra := difference(names, listed), difference(listed, names); len(missing)+len(extra) > 0 {
					t.Errorf("%s, line %d: the list of commands %s lacks %q and has %q; durabox's are %q", d.Path, p.Line, list, missing, extra, names)
				}
			}
		}
	}
}

var (
	commandList = regexp.MustCompile("`[a-z][a-z-]*`(?:,? (?:and |or )?`[a-z][a-z-]*`){4,}")
	listedName  = regexp.MustCompile("`([a-z][a-z-]*)`")
)

// difference returns what a holds that b does not.
func difference(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
}
