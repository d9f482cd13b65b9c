package main

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/guestbuild"
)

// sdkRoot is the Durabox source tree these tests run in, as an absolute
// path.
func sdkRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(guestbuild.Root())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestNew(t *testing.T) {
	t.Parallel()
	root := sdkRoot(t)
	dir := filepath.Join(t.TempDir(), "order-flow")
	code, stdout, stderr := durabox("new", dir, "--sdk", root)
	if code != 0 || stderr != "" {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	wantStdout := `created ` + dir + `: go.mod main.go main_test.go README.md .gitignore
(module order-flow, orchestration OrderFlow, the SDK from ` + root + `)
next:
  cd ` + dir + `
  go test ./...
  durabox build
  durabox serve --db durabox.db &
  durabox deploy order-flow.wasm
  durabox start OrderFlow --input '"world"' --wait
`
	if stdout != wantStdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, wantStdout)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".gitignore", "README.md", "go.mod", "main.go", "main_test.go"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("files %q, want %q", names, want)
	}
	goMod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	wantMod := `module order-flow

go 1.25.0

require github.com/durabox/durabox/guest-sdk v0.0.0-00010101000000-000000000000

require (
	github.com/durabox/durabox/abi v0.0.0-00010101000000-000000000000 // indirect
	github.com/durabox/durabox/engine v0.0.0-00010101000000-000000000000 // indirect
)

replace github.com/durabox/durabox/guest-sdk => ` + root + `/guest-sdk

replace github.com/durabox/durabox/abi => ` + root + `/abi

replace github.com/durabox/durabox/engine => ` + root + `/engine
`
	if string(goMod) != wantMod {
		t.Errorf("go.mod:\n%s\nwant:\n%s", goMod, wantMod)
	}
	for _, name := range []string{"main.go", "main_test.go"} {
		src, _ := os.ReadFile(filepath.Join(dir, name))
		formatted, err := format.Source(src)
		if err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt-formatted Go (%v):\n%s", name, err, src)
		}
		if !bytes.Contains(src, []byte("OrderFlow")) {
			t.Errorf("%s does not mention the orchestration OrderFlow", name)
		}
	}
}

// Not parallel: it sets $DURABOX_SDK (t.Setenv).
func TestNewFindsTheSDK(t *testing.T) {
	root := sdkRoot(t)
	notSDK := t.TempDir()
	os.WriteFile(filepath.Join(notSDK, "go.mod"), []byte("module example.com/other\n\ngo 1.25.0\n"), 0o644)
	tests := []struct {
		name, flag, env string
		want            string
	}{
		// This test binary is built from the source tree, like a durabox
		// built with go build.
		{name: "the tree the binary was built from", want: root},
		{name: "$DURABOX_SDK", env: root + "/guest-sdk/../", want: root},
		{name: "--sdk before $DURABOX_SDK", flag: root, env: notSDK, want: root},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DURABOX_SDK", tt.env)
			dir := filepath.Join(t.TempDir(), "p")
			args := []string{"new", dir}
			if tt.flag != "" {
				args = append(args, "--sdk", tt.flag)
			}
			if code, _, stderr := durabox(args...); code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			goMod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
			if !strings.HasSuffix(string(goMod), "=> "+tt.want+"/engine\n") {
				t.Errorf("go.mod:\n%s\nwant the SDK at %s", goMod, tt.want)
			}
		})
	}
}

// Not parallel: it sets $DURABOX_SDK (t.Setenv).
func TestNewRefusals(t *testing.T) {
	root := sdkRoot(t)
	notSDK := t.TempDir()
	os.Mkdir(filepath.Join(notSDK, "guest-sdk"), 0o755)
	os.WriteFile(filepath.Join(notSDK, "guest-sdk", "go.mod"), []byte("module example.com/other\n\ngo 1.25.0\n"), 0o644)
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644)
	base := t.TempDir()
	tests := []struct {
		name string
		args []string
		env  string
		// want is stderr's first line; usage, that the usage follows.
		want  string
		usage bool
	}{
		{name: "a directory with files", args: []string{full}, want: "durabox new: " + full + " already exists and is not empty; name a new directory"},
		{name: "a name that is not exported", args: []string{base + "/p", "--name", "orders"}, usage: true,
			want: `durabox new: --name "orders" is not an exported Go identifier (a capital letter, then letters, digits or _), such as Orders`},
		{name: "the activity's name", args: []string{base + "/p", "--name", "SayHello"}, usage: true,
			want: "durabox new: --name SayHello is the name of the project's activity; choose another"},
		{name: "no name from the directory", args: []string{base + "/123"}, usage: true,
			want: `durabox new: cannot make an orchestration name from "123"; give one with --name`},
		{name: "a bad module path", args: []string{base + "/p", "--module", "a b"}, usage: true,
			want: `durabox new: "a b" is not a Go module path (malformed import path "a b": invalid char ' '); give one with --module, such as example.com/orders`},
		{name: "--sdk that is not Durabox", args: []string{base + "/p", "--sdk", notSDK},
			want: "durabox new: " + notSDK + " (--sdk) is not a Durabox source tree: its guest-sdk/go.mod is not that of github.com/durabox/durabox/guest-sdk; give one with --sdk DIR or $DURABOX_SDK"},
		{name: "$DURABOX_SDK that does not exist", args: []string{base + "/p"}, env: root + "/nowhere",
			want: "durabox new: " + root + "/nowhere ($DURABOX_SDK) is not a Durabox source tree: open " + root + "/nowhere/guest-sdk/go.mod: no such file or directory; give one with --sdk DIR or $DURABOX_SDK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DURABOX_SDK", tt.env)
			code, stdout, stderr := durabox(append([]string{"new"}, tt.args...)...)
			wantCode, want := 1, tt.want+"\n"
			if tt.usage {
				wantCode, want = 2, tt.want+"\n\n"+usage(t, "new")
			}
			if code != wantCode || stdout != "" || stderr != want {
				t.Errorf("exit code %d, stdout %q, stderr:\n%s\nwant exit code %d, stderr:\n%s", code, stdout, stderr, wantCode, want)
			}
			// Nothing was written.
			if entries, _ := os.ReadDir(base); len(entries) != 0 {
				t.Errorf("a refused new left %v", entries)
			}
			if entries, _ := os.ReadDir(full); len(entries) != 1 {
				t.Errorf("a refused new changed a full directory: %v", entries)
			}
		})
	}
}

// TestANewProjectTestsBuildsAndRuns is an author's first hour: durabox new
// in a directory outside this repository, then each command it prints, as
// printed (with the real durabox binary, and a real durabox serve), up to
// an instance that completes on the host.
func TestANewProjectTestsBuildsAndRuns(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	work := t.TempDir()
	out := runIn(t, work, nil, bin, "new", "orders")
	_, next, ok := strings.Cut(out, "next:\n")
	if !ok {
		t.Fatalf("durabox new printed no next steps:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(next), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	want := []string{"cd orders", "go test ./...", "durabox build", "durabox serve --db durabox.db &", "durabox deploy orders.wasm", `durabox start Orders --input '"world"' --wait`}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("next steps %q, want %q", lines, want)
	}
	dir := filepath.Join(work, "orders")
	// The serve line, on a free port: the other commands find it through
	// $DURABOX_ADDR.
	srv := startServer(t, filepath.Join(dir, "durabox.db"))
	env := append([]string{"DURABOX_ADDR=" + srv.addr}, offline...)
	outputs := map[string]string{}
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "durabox serve") {
			continue
		}
		args := shellWords(line)
		if args[0] == "durabox" {
			args[0] = bin
		}
		outputs[line] = runIn(t, dir, env, args...)
	}
	if got := outputs["go test ./..."]; !strings.HasPrefix(got, "ok  \torders\t") {
		t.Errorf("go test ./...:\n%s", got)
	}
	if got := outputs["durabox build"]; !strings.HasPrefix(got, "built orders.wasm  module ") ||
		!strings.Contains(got, "  orchestrations: Orders  activities: SayHello\ndeploy it with: durabox deploy orders.wasm\n") {
		t.Errorf("durabox build:\n%s", got)
	}
	if got := outputs["durabox deploy orders.wasm"]; !strings.Contains(got, "orchestrations: Orders  activities: SayHello") {
		t.Errorf("durabox deploy:\n%s", got)
	}
	started := strings.Split(outputs[lines[5]], "\n")
	if len(started) != 4 || started[1] != "Completed" || started[2] != `"Hello, world!"` {
		t.Fatalf("durabox start:\n%s", outputs[lines[5]])
	}
	events, err := srv.client().History(context.Background(), started[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kindsOf(events), "OrchestrationStarted CustomStatusSet ActivityScheduled ActivityCompleted OrchestrationCompleted"; got != want {
		t.Errorf("history %s, want %s", got, want)
	}
	if events[0].Kind != engine.OrchestrationStarted || events[0].Name != "Orders" {
		t.Errorf("the instance is of %s", events[0].Name)
	}
	// The project's go.mod needs nothing more, not even a go.sum, and
	// holds only what a guest needs: none of the host's dependencies.
	runIn(t, dir, offline, "go", "mod", "tidy", "-diff")
	if extra := beyondTheSDK(t, dir); len(extra) > 0 {
		t.Errorf("the project's module graph holds modules a guest does not need:\n%s", strings.Join(extra, "\n"))
	}
}

// offline is the environment in which the go command downloads nothing: a
// new project must build and test with what the SDK's source tree holds.
var offline = []string{"GOPROXY=off", "GOFLAGS=-mod=mod"}

// beyondTheSDK returns the modules in the build list of the project in dir
// (go list -m all) other than the project itself and the SDK's own.
func beyondTheSDK(t *testing.T, dir string) []string {
	t.Helper()
	sdk := map[string]bool{"github.com/durabox/durabox/guest-sdk": true, "github.com/durabox/durabox/engine": true, "github.com/durabox/durabox/abi": true}
	var extra []string
	for _, path := range strings.Fields(runIn(t, dir, offline, "go", "list", "-m", "-f", "{{if not .Main}}{{.Path}}{{end}}", "all")) {
		if !sdk[path] {
			extra = append(extra, path)
		}
	}
	return extra
}

// runIn runs a program in dir, with env added to the environment, and
// returns its output, or fails the test.
func runIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// shellWords splits a command line as a POSIX shell does, for the lines
// durabox new prints: words apart by spaces, and 'single quotes'.
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, word.String())
				word.Reset()
			}
			inWord = false
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}
