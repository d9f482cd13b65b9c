package guestbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// childEnv, when set, makes the test binary a child of
// TestModulesAreSharedAcrossProcesses: it builds testdata/guest, prints
// where the module is and exits.
const childEnv = "GUESTBUILD_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		path, err := Build("internal/guestbuild/testdata/guest")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(path)
		os.Exit(0)
	}
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// TestModulesAreSharedAcrossProcesses runs two test processes one after
// the other, as two test binaries of one go test run are, with
// $DURABOX_GUEST_CACHE naming one directory: the first builds the module
// into it, the second finds it there and builds nothing.
func TestModulesAreSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := buildInChild(t, dir)
	before, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, dir+string(filepath.Separator)) {
		t.Errorf("the first process built the module into %s, not into $%s (%s)", first, CacheEnv, dir)
	}
	second := buildInChild(t, dir)
	after, err := os.Stat(second)
	if err != nil {
		t.Fatal(err)
	}
	if second != first || !os.SameFile(before, after) {
		t.Errorf("the second process built the module again, into %s; want the first's, %s", second, first)
	}
}

// buildInChild runs the test binary as a child that builds testdata/guest
// with $DURABOX_GUEST_CACHE set to dir, and returns the module's path.
func buildInChild(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1", CacheEnv+"="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
