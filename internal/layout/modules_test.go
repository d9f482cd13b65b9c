package layout

import (
	"slices"
	"strings"
	"testing"
)

// nested are the modules inside the repository besides the root's (the
// host's), each in the directory of its name, with the modules of
// Durabox's it may require. A guest's build needs none of the host's
// modules, and none of these requires one that requires it back.
var nested = []struct {
	dir      string
	requires []string
}{
	{dir: "abi"},
	{dir: "engine", requires: []string{"abi"}},
	{dir: "guest-sdk", requires: []string{"abi", "engine"}},
}

// TestGuestModulesNeedNoHostModule checks the build list of each nested
// module (go list -m all in its directory): itself and the modules it may
// require, nothing else.
func TestGuestModulesNeedNoHostModule(t *testing.T) {
	t.Parallel()
	for _, m := range nested {
		t.Run(m.dir, func(t *testing.T) {
			t.Parallel()
			want := []string{module + "/" + m.dir}
			for _, r := range m.requires {
				want = append(want, module+"/"+r)
			}
			got := strings.Fields(goIn(t, m.dir, nil, "list", "-m", "-f", "{{.Path}}", "all"))
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the module in %s/ has the build list\n\t%s\nwant\n\t%s", m.dir, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}

// TestEveryModuleIsTidy runs go mod tidy -diff in the root module and in
// each nested one: go.mod and go.sum hold what the code needs, no more.
func TestEveryModuleIsTidy(t *testing.T) {
	t.Parallel()
	dirs := []string{"."}
	for _, m := range nested {
		dirs = append(dirs, m.dir)
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			goIn(t, dir, nil, "mod", "tidy", "-diff")
		})
	}
}
