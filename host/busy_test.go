package host

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestAnInstanceInATurnIsNeitherMovedNorReset: while a turn holds an
// instance, an upgrade skips it (after trying again) and a reset is
// refused; once the turn lets go, the upgrade moves it.
func TestAnInstanceInATurnIsNeitherMovedNorReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newBareHost(t) // no dispatchers: the test takes the turns
	hashes := deployGuest(t, h, "host/testdata/guests/versions", nil, []string{"main.version=v2"})
	if _, err := h.StartOn(ctx, hashes[0], "Flow", nil, "held"); err != nil {
		t.Fatal(err)
	}
	item, err := lockNext(ctx, h.st, time.Now(), time.Minute)
	if err != nil || item == nil {
		t.Fatalf("lock: %v, %v", item, err)
	}
	h.turn(ctx, item) // it waits for "go"
	if err := h.Raise(ctx, "held", "go", nil, false); err != nil {
		t.Fatal(err)
	}
	held, err := lockNext(ctx, h.st, time.Now(), time.Minute)
	if err != nil || held == nil {
		t.Fatalf("lock: %v, %v", held, err)
	}

	report, err := h.Upgrade(ctx, api.UpgradeRequest{From: hashes[0], To: hashes[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := api.UpgradeResult{InstanceID: "held", Name: "Flow", From: hashes[0], Outcome: api.UpgradeSkipped, Events: 2,
		Reason: "a turn held it each of the 5 times it was about to move; upgrade it again"}
	if len(report.Results) != 1 || report.Results[0] != want {
		t.Fatalf("results %+v, want %+v", report.Results, want)
	}
	if _, err := h.Reset(ctx, "held", api.ResetRequest{ToEvent: 1}); !errors.Is(err, api.ErrBusy) {
		t.Fatalf("reset of the held instance: %v, want api.ErrBusy", err)
	}
	inst, _ := h.Instance(ctx, "held")
	history, _ := h.History(ctx, "held")
	if inst.ModuleHash != hashes[0] || len(history) != 2 {
		t.Fatalf("the held instance changed: module %s, %d events", api.Short(inst.ModuleHash), len(history))
	}

	h.abandon(ctx, "held", held.LockToken)
	report, err = h.Upgrade(ctx, api.UpgradeRequest{From: hashes[0], To: hashes[1]}, nil)
	if err != nil || report.Summary.Moved != 1 {
		t.Fatalf("once the turn let go: %+v, %v", report, err)
	}
	history, _ = h.History(ctx, "held")
	if last := history[len(history)-1]; last.Kind != engine.ModuleChanged {
		t.Fatalf("history ends with %s", last.Kind)
	}
}

// TestAnActivityInFlightMovesWithItsInstance: an upgrade moves the
// activity task an instance has waiting with it, and refuses a module that
// does not register that activity.
func TestAnActivityInFlightMovesWithItsInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newBareHost(t) // no dispatchers: the activity waits
	hashes := deployGuest(t, h, "host/testdata/guests/versions", nil, []string{"main.version=v3", "main.nostep=yes"}, []string{"main.version=v3"})
	if _, err := h.StartOn(ctx, hashes[0], "Flow", nil, "busy"); err != nil {
		t.Fatal(err)
	}
	for _, raise := range []bool{false, true} {
		if raise {
			if err := h.Raise(ctx, "busy", "go", nil, false); err != nil {
				t.Fatal(err)
			}
		}
		item, err := lockNext(ctx, h.st, time.Now(), time.Minute)
		if err != nil || item == nil {
			t.Fatalf("lock: %v, %v", item, err)
		}
		h.turn(ctx, item) // Step is scheduled in the second
	}

	report, err := h.Upgrade(ctx, api.UpgradeRequest{From: hashes[0], To: hashes[1]}, nil)
	want := fmt.Sprintf(`module %s does not register activity "Step", which the instance has in flight (event 4)`, api.Short(hashes[1]))
	if err != nil || len(report.Results) != 1 || report.Results[0].Outcome != api.UpgradeFails || report.Results[0].Reason != want {
		t.Fatalf("upgrade to a module without Step: %+v, %v; want it to fail: %s", report.Results, err, want)
	}
	report, err = h.Upgrade(ctx, api.UpgradeRequest{From: hashes[0], To: hashes[2]}, nil)
	if err != nil || report.Summary.Moved != 1 {
		t.Fatalf("upgrade to v3: %+v, %v", report, err)
	}
	works, err := h.st.LockNextActivities(ctx, time.Now(), time.Minute, 1, nil)
	if err != nil || len(works) != 1 || works[0].Task.Name != "Step" || works[0].ModuleHash != hashes[2] {
		t.Fatalf("the activity task after the move: %+v, %v; want Step, on %s", works, err, api.Short(hashes[2]))
	}
}

// deployGuest deploys the guest at pkg (as guestbuild names it) built with
// each set of vars, and returns the modules' hashes.
func deployGuest(t testing.TB, h *Host, pkg string, vars ...[]string) []string {
	t.Helper()
	var hashes []string
	for _, v := range vars {
		wasm, err := guestbuild.Wasm(pkg, v...)
		if err != nil {
			t.Fatal(err)
		}
		info, err := h.Deploy(context.Background(), wasm)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, info.Hash)
	}
	return hashes
}
