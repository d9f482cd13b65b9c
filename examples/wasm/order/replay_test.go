package main

import (
	"testing"

	"github.com/durabox/durabox/host/replaytest"
)

// TestSavedHistoriesReplay replays the histories of real instances, kept
// under testdata/histories (durabox history ID --json), on the module built
// from this code, in the sandbox: a change that those instances would not
// survive fails here, before it is deployed.
func TestSavedHistoriesReplay(t *testing.T) {
	t.Parallel()
	replaytest.ReplayDir(t, replaytest.Build(t, "."), "testdata/histories")
}
