package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Not parallel: it runs in a directory of its own (t.Chdir).
func TestBuild(t *testing.T) {
	root := sdkRoot(t)
	t.Chdir(t.TempDir())
	code, stdout, stderr := durabox("build", filepath.Join(root, "examples/wasm/hello"))
	if code != 0 || stderr != "" {
		t.Fatalf("exit code %d, stderr:\n%s", code, stderr)
	}
	want := regexp.MustCompile(`^built hello.wasm  module [0-9a-f]{12}  orchestrations: Greeting  activities: SayHello\ndeploy it with: durabox deploy hello.wasm\n$`)
	if !want.MatchString(stdout) {
		t.Errorf("stdout:\n%s", stdout)
	}
	wasm, err := os.ReadFile("hello.wasm")
	if err != nil || !strings.HasPrefix(string(wasm), "\x00asm") {
		t.Fatalf("hello.wasm: %v", err)
	}

	code, stdout, stderr = durabox("build", filepath.Join(root, "examples/wasm/fanout"), "-o", "out/fan out.wasm", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit code %d, stderr:\n%s", code, stderr)
	}
	var b built
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat("out/fan out.wasm")
	if err != nil || b.File != "out/fan out.wasm" || int64(b.Bytes) != info.Size() || len(b.Hash) != 64 || b.SDK != "durabox-go/0.1" ||
		!reflect.DeepEqual(b.Orchestrations, []string{"WordCount"}) || !reflect.DeepEqual(b.Activities, []string{"Count"}) {
		t.Fatalf("--json: %+v (%v)", b, err)
	}
}

// TestBuildPassesCompilerErrorsThrough: what go build prints reaches the
// author unchanged.
//
// Not parallel: it runs in a directory of its own (t.Chdir).
func TestBuildPassesCompilerErrorsThrough(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broken")
	if code, _, stderr := durabox("new", dir, "--sdk", sdkRoot(t)); code != 0 {
		t.Fatal(stderr)
	}
	main := filepath.Join(dir, "main.go")
	src, _ := os.ReadFile(main)
	os.WriteFile(main, []byte(strings.Replace(string(src), `return greeting, nil`, `return greeting, undefinedThing`, 1)), 0o644)
	// What go build itself says, built the same way.
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", filepath.Join(t.TempDir(), "x.wasm"), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	goSays, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(goSays), "undefined: undefinedThing") {
		t.Fatalf("go build: %v\n%s", err, goSays)
	}
	t.Chdir(dir)
	code, stdout, stderr := durabox("build")
	if want := string(goSays) + "durabox build: go build failed (exit status 1)\n"; code != 1 || stdout != "" || stderr != want {
		t.Fatalf("exit code %d, stdout %q, stderr:\n%s\nwant:\n%s", code, stdout, stderr, want)
	}
	if _, err := os.Stat("broken.wasm"); err == nil {
		t.Error("a failed build left broken.wasm")
	}
}

// Not parallel: it runs in a directory of its own (t.Chdir).
func TestBuildRefusesWhatAHostWouldRefuse(t *testing.T) {
	root := sdkRoot(t)
	t.Chdir(t.TempDir())
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"imports the host lacks", []string{filepath.Join(root, "host/testdata/guests/badimport")},
			"durabox build: badimport.wasm is built, but a host would refuse it: host: module refused: it imports functions the host does not provide: env.mystery, wasi_snapshot_preview2.clock_now\n"},
		{"another ABI version", []string{filepath.Join(root, "host/testdata/guests/abi2")},
			"durabox build: abi2.wasm is built, but a host would refuse it: host: module refused: it speaks ABI version 2 and this host speaks version 1; rebuild it with a guest SDK for version 1\n"},
		{"not a directory", []string{filepath.Join(root, "go.mod")},
			"durabox build: " + filepath.Join(root, "go.mod") + " is not a directory; name the directory of the module's main package\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := durabox(append([]string{"build"}, tt.args...)...)
			if code != 1 || stdout != "" || stderr != tt.want {
				t.Fatalf("exit code %d, stdout %q, stderr:\n%s\nwant:\n%s", code, stdout, stderr, tt.want)
			}
		})
	}
	code, _, stderr := durabox("build", "a", "b")
	if want := "durabox build: unexpected argument \"b\"\n\n" + usage(t, "build"); code != 2 || stderr != want {
		t.Fatalf("two directories: exit code %d, stderr:\n%s", code, stderr)
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"hello.wasm":       "hello.wasm",
		"out/fan out.wasm": "'out/fan out.wasm'",
		"it's.wasm":        `'it'\''s.wasm'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
