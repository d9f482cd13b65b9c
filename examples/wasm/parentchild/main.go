// Command parentchild shows sub-orchestrations: Parent splits an order into
// parcels, ships each with a Ship child orchestration (all at once), waits
// for every child, and starts a detached Audit that nobody waits for.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Parent", Parent)
	durabox.RegisterOrchestration("Ship", Ship)
	durabox.RegisterOrchestration("Audit", Audit)
	durabox.RegisterActivity("Dispatch", Dispatch)
}

// Parent ships every parcel through a child and reports what they said.
func Parent(ctx *durabox.Context, parcels []string) (string, error) {
	var children []*durabox.Future
	for _, p := range parcels {
		children = append(children, ctx.CallChild("Ship", p))
	}
	shipped, err := durabox.All[string](children...)
	if err != nil {
		return "", err
	}
	if err := ctx.StartDetached("Audit", len(parcels)); err != nil {
		return "", err
	}
	return strings.Join(shipped, "; "), nil
}

// Ship dispatches one parcel; a parcel called "lost" fails.
func Ship(ctx *durabox.Context, parcel string) (string, error) {
	return durabox.Call[string](ctx, "Dispatch", parcel)
}

// Audit records how many parcels an order had.
func Audit(ctx *durabox.Context, n int) (string, error) {
	return fmt.Sprintf("audited an order of %d parcels", n), nil
}

// Dispatch sends a parcel on its way.
func Dispatch(_ context.Context, parcel string) (string, error) {
	if parcel == "lost" {
		return "", fmt.Errorf("parcel %q cannot be found", parcel)
	}
	return parcel + " shipped", nil
}

func main() {}
