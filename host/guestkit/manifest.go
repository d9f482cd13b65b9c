package guestkit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host"
)

// manifestCase names the case that checks what the module registers.
const manifestCase = "manifest"

// queryableName is the optional orchestration of the query case.
const queryableName = "Queryable"

// The names docs/conformance.md says a conformance module registers.
var (
	wantOrchestrations = []string{"Sequence", "FanOut", "Fails", "Timer", "Race", "Events", "Waiter", "Cancellable", "Parent", "Countdown", "Status", "Raiser"}
	wantActivities     = []string{"Echo", "Boom"}
)

// checkManifest checks that the module registers every name of
// docs/conformance.md, and exports durabox_query if it registers
// Queryable. (NewProbe has checked its ABI version, as deploy does.)
func checkManifest(p *host.Probe) error {
	m := p.Manifest()
	var missing []string
	for _, n := range wantOrchestrations {
		if !slices.Contains(m.Orchestrations, n) {
			missing = append(missing, "orchestration "+n)
		}
	}
	for _, n := range wantActivities {
		if !slices.Contains(m.Activities, n) {
			missing = append(missing, "activity "+n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the module does not register %s (it registers the orchestrations %v and the activities %v); a conformance module registers every name docs/conformance.md lists (the cases that run what it lacks fail too)", strings.Join(missing, ", "), m.Orchestrations, m.Activities)
	}
	if slices.Contains(m.Orchestrations, queryableName) && !slices.Contains(p.Exports(), abi.ExportQuery) {
		return fmt.Errorf("the module registers %s but does not export %s: register it only in a module that answers queries", queryableName, abi.ExportQuery)
	}
	return nil
}
