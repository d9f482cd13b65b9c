// Package cexamples tests the C examples (examples/c, built with
// guest-sdk/c) against their Go twins (examples/wasm): each scenario runs
// on a host with the Go module and on one with the C module, on both
// runtimes, and must end the same, answer the same queries and record the
// same history.
package cexamples

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/cguest"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/testhost"
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	cguest.Cleanup()
	os.Exit(code)
}

// A scenario starts an orchestration and acts on it: each step waits until
// the history has an event of the kind named, then acts.
type scenario struct {
	id, orchestration, input string
	steps                    []step
	// queries are asked once the instance has ended.
	queries []string
}

type step struct {
	after engine.EventKind
	do    func(ctx context.Context, h *host.Host, id string) error
}

func raise(name, data string) func(context.Context, *host.Host, string) error {
	return func(ctx context.Context, h *host.Host, id string) error {
		return h.Raise(ctx, id, name, json.RawMessage(data), false)
	}
}

var scenarios = []scenario{
	{id: "hello", orchestration: "Greeting", input: `"world"`},
	{id: "hello-escapes", orchestration: "Greeting", input: `"<ada> & \"bob\"\n\u2028é"`},
	{id: "fanout", orchestration: "WordCount", input: `["one two three four five six seven eight", "nine ten", "eleven", ""]`},
	{id: "approved", orchestration: "Approval", input: `{"item": "laptop", "timeout": "1h"}`,
		steps:   []step{{engine.ExternalSubscribed, raise("Approval", `{"approved": true, "by": "ada"}`)}},
		queries: []string{"Decision"}},
	{id: "rejected", orchestration: "Approval", input: `{"item": "car", "timeout": "1h"}`,
		steps:   []step{{engine.ExternalSubscribed, raise("Approval", `null`)}},
		queries: []string{"Decision"}},
	{id: "expired", orchestration: "Approval", input: `{"item": "pen", "timeout": "20ms"}`, queries: []string{"Decision"}},
	{id: "cancelled", orchestration: "Approval", input: `{"item": "desk", "timeout": "1h"}`,
		steps: []step{{engine.ExternalSubscribed, func(ctx context.Context, h *host.Host, id string) error { return h.Cancel(ctx, id, "withdrawn") }}}},
	{id: "bad-timeout", orchestration: "Approval", input: `{"item": "pen", "timeout": "1x"}`},
}

// outcome is what a scenario ends with.
type outcome struct {
	Status       engine.Status
	Result       string
	Failure      string
	CustomStatus string
	Queries      []string
	History      []engine.Event
}

func TestCExamplesMatchGo(t *testing.T) {
	t.Parallel()
	cguest.Require(t)
	modules := map[string][][]byte{}
	for _, e := range []string{"hello", "approval", "fanout"} {
		goWasm, err := guestbuild.Wasm("examples/wasm/" + e)
		if err != nil {
			t.Fatal(err)
		}
		modules["go"] = append(modules["go"], goWasm)
		modules["c"] = append(modules["c"], cguest.Wasm(t, "examples/c/"+e+"/"+e+".c"))
	}
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			hosts := map[string]*host.Host{"go": testhost.Start(t, host.Options{Runtime: rt}, modules["go"]...), "c": testhost.Start(t, host.Options{Runtime: rt}, modules["c"]...)}
			for _, sc := range scenarios {
				t.Run(sc.id, func(t *testing.T) {
					goOut, cOut := run(t, hosts["go"], sc), run(t, hosts["c"], sc)
					if sc.id == "approved" && (cOut.Result != `"laptop approved by ada"` || cOut.Queries[0] != `{"approved":true,"by":"ada"}`) {
						t.Errorf("the C module: result %s, query Decision %s", cOut.Result, cOut.Queries[0])
					}
					if !reflect.DeepEqual(goOut, cOut) {
						t.Errorf("the Go module and the C module differ:\n go %s\n  c %s", describe(goOut), describe(cOut))
					}
				})
			}
		})
	}
}

// run runs a scenario to its end and returns how it ended, with the
// history's times and failure details (Go's hold stack traces) left out.
func run(t *testing.T, h *host.Host, sc scenario) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.Start(ctx, sc.orchestration, json.RawMessage(sc.input), sc.id); err != nil {
		t.Fatal(err)
	}
	for _, s := range sc.steps {
		for !has(t, h, sc.id, s.after) {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: no %s in a minute", sc.id, s.after)
			case <-time.After(5 * time.Millisecond):
			}
		}
		if err := s.do(ctx, h, sc.id); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := h.Wait(ctx, sc.id)
	if err != nil {
		t.Fatal(err)
	}
	out := outcome{Status: inst.Status, Result: string(inst.Result), CustomStatus: inst.CustomStatus}
	if inst.Failure != nil {
		out.Failure = inst.Failure.Message
	}
	for _, q := range sc.queries {
		answer, err := h.Query(ctx, sc.id, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		out.Queries = append(out.Queries, string(answer))
	}
	history, err := h.History(ctx, sc.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range history {
		e.Time, e.FireAt = time.Time{}, nil
		if e.Failure != nil {
			f := *e.Failure
			f.Details = ""
			e.Failure = &f
		}
		out.History = append(out.History, e)
	}
	sortCompletions(out.History)
	return out
}

// sortCompletions puts each run of activity results in the order of the
// activities, keeping the ids where they are: activities that run at once
// (fanout's) finish in whatever order the machine lets them.
func sortCompletions(history []engine.Event) {
	done := func(e engine.Event) bool {
		return e.Kind == engine.ActivityCompleted || e.Kind == engine.ActivityFailed
	}
	for i := 0; i < len(history); {
		j := i
		for j < len(history) && done(history[j]) {
			j++
		}
		if j == i {
			i++
			continue
		}
		run := history[i:j]
		slices.SortStableFunc(run, func(a, b engine.Event) int { return cmp.Compare(a.ScheduleID, b.ScheduleID) })
		for k := range run {
			run[k].ID = int64(i + k + 1)
		}
		i = j
	}
}

func has(t *testing.T, h *host.Host, id string, kind engine.EventKind) bool {
	history, err := h.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range history {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func describe(o outcome) string {
	var events []string
	for _, e := range o.History {
		raw, _ := json.Marshal(e)
		events = append(events, string(raw))
	}
	return fmt.Sprintf("%s result %s failure %q status %q queries %q\n    %s", o.Status, o.Result, o.Failure, o.CustomStatus, o.Queries, strings.Join(events, "\n    "))
}
