package docs

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

var update = flag.Bool("update", false, "write the generated parts of the documents (docs/api.md's routes) from what they describe")

// openAPIPath is the OpenAPI document that describes the host's HTTP API,
// and apiPath the reference that lists its routes.
const (
	openAPIPath = "host/server/openapi.json"
	apiPath     = "docs/api.md"
)

// The markers around the table of routes in docs/api.md.
const (
	routesBegin = "<!-- routes: go test ./internal/docs -run APIReference -update writes this table from " + openAPIPath + "; edit that, not this -->\n"
	routesEnd   = "<!-- end of routes -->\n"
)

// TestAPIReferenceListsTheRoutes: docs/api.md lists every route and
// method of host/server/openapi.json, with the token it needs, and nothing else.
// With -update it writes the table.
func TestAPIReferenceListsTheRoutes(t *testing.T) {
	t.Parallel()
	root := guestbuild.Root()
	spec, err := os.ReadFile(filepath.Join(root, openAPIPath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := routeTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	Section{Path: apiPath, Begin: routesBegin, End: routesEnd}.Check(t, root, want, *update)
}

// routeTable returns the Markdown table of the routes of the OpenAPI
// document spec: each path's methods, the token each needs, what it does
// and the statuses it answers with, sorted by path.
func routeTable(spec []byte) (string, error) {
	var doc struct {
		Paths map[string]map[string]struct {
			Summary   string                     `json:"summary"`
			Token     string                     `json:"x-durabox-token"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", openAPIPath, err)
	}
	var b strings.Builder
	b.WriteString("| method | path | token | what | statuses |\n|---|---|---|---|---|\n")
	for _, p := range slices.Sorted(maps.Keys(doc.Paths)) {
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := doc.Paths[p][method]
			if !ok {
				continue
			}
			statuses := slices.Sorted(maps.Keys(op.Responses))
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", strings.ToUpper(method), p, op.Token, op.Summary, strings.Join(statuses, ", "))
		}
	}
	return b.String(), nil
}
