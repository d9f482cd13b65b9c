package torture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestKillDuringUpgrade kills the host with SIGKILL in the middle of
// upgrades, three times, each time once the upgrade has reported some
// moves, and checks after each kill that every instance is on exactly one
// module: on v2 with the move as the last event of its history, or on v1
// with its history as it was. Then a last upgrade finishes the job, and
// every instance completes: those that moved on v2, the others on v1.
func TestKillDuringUpgrade(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills real processes; make test runs it")
	}
	dir := t.TempDir()
	bin, _, err := build("", dir)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "host.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	db := filepath.Join(dir, "upgrade.db")
	var p *hostProc
	launch := func() {
		t.Helper()
		if p, err = startHost(bin, []string{"--db", db, "--addr", addr, "--durability", "full"}, log); err != nil {
			t.Fatal(err)
		}
	}
	launch()
	defer func() { p.kill() }()
	cl := client.New("http://"+addr, &client.Options{HTTPClient: &http.Client{Timeout: time.Minute}})
	ctx := context.Background()
	deploy := func(vars ...string) string {
		wasm, err := guestbuild.Wasm("host/testdata/guests/versions", vars...)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cl.Deploy(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		return m.Hash
	}
	v1 := deploy()
	const n = 120
	var all, passed, waiting []string
	for i := range n {
		id := fmt.Sprintf("flow-%03d", i)
		if _, err := cl.Start(ctx, api.StartRequest{Name: "Flow", Input: json.RawMessage(`"x"`), ID: id}); err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
		if i%4 == 0 {
			passed = append(passed, id)
		} else {
			waiting = append(waiting, id)
		}
	}
	until(t, cl, all, func(inst api.Instance) bool { return inst.Status == engine.StatusRunning })
	raiseGo(t, cl, passed)
	until(t, cl, passed, func(inst api.Instance) bool { return inst.CustomStatus != "" })
	v2 := deploy("main.version=v2")
	before := map[string][]engine.Event{}
	for _, id := range all {
		if before[id], err = cl.History(ctx, id); err != nil {
			t.Fatal(err)
		}
	}

	moved := 0
	for round := range 3 {
		// Kill the host once this upgrade has reported a few more moves.
		killAt := 10
		var once sync.Once
		killed := make(chan struct{})
		_, err := cl.Upgrade(ctx, api.UpgradeRequest{From: v1, To: v2, Parallel: 2}, func(line api.UpgradeLine) {
			if line.Result != nil && line.Result.Outcome == api.UpgradeMoved {
				killAt--
			}
			if killAt == 0 {
				once.Do(func() {
					p.kill()
					close(killed)
				})
			}
		})
		select {
		case <-killed:
		default:
			t.Fatalf("round %d: the upgrade ended before the kill: %v", round, err)
		}
		if err == nil {
			t.Fatalf("round %d: the upgrade reported its end, and the host was killed before", round)
		}
		launch()
		now := onOneModule(t, cl, all, before, v1, v2)
		if now <= moved {
			t.Fatalf("round %d: %d instances on v2 after the kill, %d before; the upgrade moved none", round, now, moved)
		}
		for _, id := range passed {
			if inst, _ := cl.Instance(ctx, id); inst.ModuleHash != v1 {
				t.Fatalf("%s, past the changed point, moved to v2", id)
			}
		}
		moved = now
		t.Logf("round %d: killed with %d of %d compatible instances moved", round, moved, len(waiting))
	}
	report, err := cl.Upgrade(ctx, api.UpgradeRequest{From: v1, To: v2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if report.Summary != (api.UpgradeSummary{Moved: len(waiting) - moved, Diverges: len(passed)}) {
		t.Fatalf("the last upgrade: %+v; want the %d instances left to move moved, the %d past the change diverging", report.Summary, len(waiting)-moved, len(passed))
	}
	if got := onOneModule(t, cl, all, before, v1, v2); got != len(waiting) {
		t.Fatalf("%d instances on v2, want %d", got, len(waiting))
	}

	raiseGo(t, cl, waiting)
	until(t, cl, waiting, func(inst api.Instance) bool { return inst.CustomStatus != "" })
	raiseGo(t, cl, all)
	until(t, cl, all, func(inst api.Instance) bool { return inst.Status.IsTerminal() })
	for _, id := range all {
		inst, err := cl.Instance(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := `"step a by v1, finished by v1"`
		if slices.Contains(waiting, id) {
			want = `"step b by v2, finished by v2"`
		}
		if inst.Status != engine.StatusCompleted || string(inst.Result) != want {
			t.Errorf("%s: %s with %s; want %s", id, inst.Status, inst.Result, want)
		}
		history, err := cl.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if problems := wellFormed(history); len(problems) > 0 {
			t.Errorf("%s: %s", id, strings.Join(problems, "; "))
		}
	}
}

// onOneModule checks that every instance is on exactly one module: on v2
// with its history as before and the move after it, or on v1 with its
// history as before; it returns how many are on v2.
func onOneModule(t *testing.T, cl *client.Client, ids []string, before map[string][]engine.Event, v1, v2 string) int {
	t.Helper()
	onV2 := 0
	for _, id := range ids {
		inst, err := cl.Instance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		history, err := cl.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		was := before[id]
		switch {
		case inst.ModuleHash == v1 && sameEvents(history, was):
		case inst.ModuleHash == v2 && len(history) == len(was)+1 && sameEvents(history[:len(was)], was) &&
			history[len(was)].Kind == engine.ModuleChanged && history[len(was)].Module == v2:
			onV2++
		default:
			t.Fatalf("%s is half moved: on module %.12s, with a history of %d events ending with %s (it had %d)", id, inst.ModuleHash, len(history), history[len(history)-1].Kind, len(was))
		}
	}
	return onV2
}

func sameEvents(a, b []engine.Event) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// until polls the instances until ready holds for each, for two minutes.
func until(t *testing.T, cl *client.Client, ids []string, ready func(api.Instance) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range ids {
		for {
			inst, err := cl.Instance(context.Background(), id)
			var answer *client.Error
			if err != nil && !errors.As(err, &answer) {
				t.Fatal(err)
			}
			if err == nil && ready(inst) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never got there: %+v, %v", id, inst, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func raiseGo(t *testing.T, cl *client.Client, ids []string) {
	t.Helper()
	for _, id := range ids {
		if err := cl.Raise(context.Background(), id, api.RaiseRequest{Name: "go"}); err != nil {
			t.Fatal(err)
		}
	}
}
