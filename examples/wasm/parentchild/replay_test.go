package main

import (
	"testing"

	"github.com/durabox/durabox/host/replaytest"
)

// TestSavedHistoriesReplay replays the histories of real instances, kept
// under testdata/histories (durabox history ID --json), on the module built
// from this code, in the sandbox. Those recorded before children's ids were
// derived as PARENT~EXECUTION:EVENT hold ids of the old form, PARENT:EVENT
// ("order-1:2"): they replay all the same, since a replay keeps the ids
// history records.
func TestSavedHistoriesReplay(t *testing.T) {
	t.Parallel()
	replaytest.ReplayDir(t, replaytest.Build(t, "."), "testdata/histories")
}
