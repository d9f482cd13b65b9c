package durabox

import (
	"errors"
	"fmt"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func init() {
	// Parallel: two branches, each calls a then b; the root waits for both.
	RegisterOrchestration("Parallel", func(ctx *Context, _ any) (string, error) {
		var done []*Future
		out := make([]string, 2)
		for i, name := range []string{"A", "B"} {
			done = append(done, ctx.Go(func(ctx *Context) {
				first, _ := Call[string](ctx, name+"1", nil)
				out[i], _ = Call[string](ctx, name+"2", first)
			}))
		}
		// A non-pausing call in the same step as the spawns: it is emitted
		// before the branches run, since they start in the next round.
		ctx.CallActivity("Root", ctx.Now().Unix())
		_, err := All[any](done...)
		return out[0] + out[1], err
	})
	// PlainGo uses its Context from a goroutine of its own.
	RegisterOrchestration("PlainGo", func(ctx *Context, _ any) (string, error) {
		ch := make(chan string)
		go func() {
			s, _ := Call[string](ctx, "Work", nil)
			ch <- s
		}()
		return <-ch, nil
	})
	// Abandons returns while a branch it started has not run yet.
	RegisterOrchestration("Abandons", func(ctx *Context, _ any) (string, error) {
		ctx.Go(func(ctx *Context) { ctx.CallActivity("Work", nil) })
		return "done", nil
	})
	// Stops stops a unit without returning from it, by a panic or by
	// runtime.Goexit (input "root panic", "branch goexit", …): the root
	// itself, or the first of two branches started in the same step while
	// the root waits for both.
	RegisterOrchestration("Stops", func(ctx *Context, how string) (string, error) {
		where, what, _ := strings.Cut(how, " ")
		stop := func() {
			if what == "goexit" {
				goruntime.Goexit()
			}
			panic("stopped")
		}
		if where == "root" {
			stop()
		}
		first := ctx.Go(func(ctx *Context) {
			ctx.CallActivity("Before", nil)
			stop()
		})
		second := ctx.Go(func(ctx *Context) { ctx.CallActivity("After", nil) })
		_, err := All[any](first, second)
		return "returned", err
	})
	RegisterOrchestration("Race", func(ctx *Context, _ any) (string, error) {
		work := ctx.CallActivity("Work", nil)
		timeout := ctx.NewTimer(time.Minute)
		if ctx.Select(work, timeout) == 1 {
			if err := work.Get(nil); err != ErrCanceled {
				return "", err
			}
			return "timed out", nil
		}
		return Await[string](work)
	})
}

func init() {
	// BranchRace races a branch that calls Work against a timer; the
	// loser's future is then waited for.
	RegisterOrchestration("BranchRace", func(ctx *Context, _ any) (string, error) {
		var got string
		branch := ctx.Go(func(ctx *Context) { got, _ = Call[string](ctx, "Work", nil) })
		timer := ctx.NewTimer(time.Minute)
		won := ctx.Select(branch, timer)
		if _, err := All[any](branch, timer); err != nil && !errors.Is(err, ErrCanceled) {
			return "", err
		}
		return fmt.Sprintf("%d won; the branch got %s", won, got), nil
	})
}

func resolve(seq uint64, result string) abi.Job {
	return abi.Job{Kind: abi.JobResolveActivity, Seq: seq, Result: []byte(result)}
}

// names lists the commands as kind:name(seq), for compact comparison.
func names(cmds []abi.Command) []string {
	var out []string
	for _, c := range cmds {
		switch c.Kind {
		case abi.CommandScheduleActivity:
			out = append(out, c.Name)
		case abi.CommandStartTimer:
			out = append(out, "timer")
		case abi.CommandCancelTimer:
			out = append(out, "cancel timer "+string(rune('0'+c.Target)))
		case abi.CommandCancelActivity:
			out = append(out, "cancel activity "+string(rune('0'+c.Target)))
		case abi.CommandComplete:
			out = append(out, "complete "+string(c.Output))
		case abi.CommandFail:
			out = append(out, "fail "+c.Failure.Message)
		}
	}
	return out
}

func expect(t *testing.T, step string, got []abi.Command, want ...string) {
	t.Helper()
	if g := names(got); !reflect.DeepEqual(g, want) {
		t.Fatalf("%s: commands %q, want %q", step, g, want)
	}
}

func TestBranchesRunInStructuralOrder(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	// Commands 1 Root, 2 A1, 3 B1: the spawned branches run in the next
	// round, in the order they were started.
	expect(t, "start", rt.activate(activation(0, start("Parallel", `null`))), "Root", "A1", "B1")
	// Only B's call resolves: B continues alone; A is not woken.
	expect(t, "B1 resolves", rt.activate(activation(1, resolve(3, `"b"`))), "B2")
	// Resolving B's second call completes branch B; the root still waits.
	expect(t, "B2 resolves", rt.activate(activation(2, resolve(4, `"bb"`))))
	expect(t, "A1 resolves", rt.activate(activation(3, resolve(2, `"a"`))), "A2")
	expect(t, "A2 resolves", rt.activate(activation(4, resolve(5, `"aa"`))), `complete "aabb"`)
}

func TestBranchesResolvedTogetherContinueInStableOrder(t *testing.T) {
	t.Parallel()
	for _, jobs := range [][]abi.Job{
		{resolve(2, `"a"`), resolve(3, `"b"`)},
		{resolve(3, `"b"`), resolve(2, `"a"`)}, // the other job order: same commands
	} {
		rt := newRuntime()
		rt.activate(activation(0, start("Parallel", `null`)))
		expect(t, "both resolve", rt.activate(activation(1, jobs...)), "A2", "B2")
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		job  abi.Job
		want []string
	}{
		{"the activity wins and the timer is cancelled", resolve(1, `"worked"`), []string{"cancel timer 2", `complete "worked"`}},
		{"the timer wins and the activity is cancelled", abi.Job{Kind: abi.JobFireTimer, Seq: 2}, []string{"cancel activity 1", `complete "timed out"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime()
			expect(t, "start", rt.activate(activation(0, start("Race", `null`))), "Work", "timer")
			expect(t, "then", rt.activate(activation(1, tt.job)), tt.want...)
			if len(rt.futures) != 0 {
				t.Errorf("futures left waiting: %v", rt.futures)
			}
		})
	}
	// Both resolved before the select looks: the first in the list wins,
	// and the timer, already fired, needs no cancelling.
	rt := newRuntime()
	rt.activate(activation(0, start("Race", `null`)))
	expect(t, "both", rt.activate(activation(1, abi.Job{Kind: abi.JobFireTimer, Seq: 2}, resolve(1, `"worked"`))), `complete "worked"`)
}

// TestSelectOverABranch: a branch's future that loses a Select is not
// cancelled (no command; the branch goes on), and resolves when the
// branch returns; one that wins has the timer cancelled.
func TestSelectOverABranch(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	expect(t, "start", rt.activate(activation(0, start("BranchRace", `null`))), "timer", "Work")
	expect(t, "the timer fires", rt.activate(activation(60, abi.Job{Kind: abi.JobFireTimer, Seq: 1})))
	expect(t, "the branch's call returns", rt.activate(activation(61, resolve(2, `"late"`))), `complete "1 won; the branch got late"`)

	rt = newRuntime()
	rt.activate(activation(0, start("BranchRace", `null`)))
	expect(t, "the branch's call returns first", rt.activate(activation(1, resolve(2, `"early"`))), "cancel timer 1", `complete "0 won; the branch got early"`)
}

func TestPlainGoroutineFailsTheOrchestration(t *testing.T) {
	t.Parallel()
	got := newRuntime().activate(activation(0, start("PlainGo", `null`)))
	want := "fail durabox: ctx.CallActivity was called from a goroutine the orchestration started with a go statement (or a finalizer): " +
		"only the orchestration function and the branches it starts with ctx.Go may use its Context and futures, " +
		"since they run one at a time in an order that replays; start the goroutine with ctx.Go, and wait for it with the future ctx.Go returns"
	expect(t, "start", got, want)
	if !strings.Contains(got[0].Failure.Details, "concurrency_test.go") {
		t.Errorf("details do not show the goroutine's stack:\n%s", got[0].Failure.Details)
	}
}

// TestAUnitThatStopsFailsTheOrchestration stops the root or a branch with
// a panic or runtime.Goexit: the orchestration fails saying which, with
// the unit's stack, nothing runs after (the other branch, started in the
// same step, does not), and a later activation finds it ended.
func TestAUnitThatStopsFailsTheOrchestration(t *testing.T) {
	t.Parallel()
	const goexit = "fail durabox: the orchestration called runtime.Goexit, which stops its goroutine without returning; return from the function instead"
	tests := []struct {
		how  string
		want []string
	}{
		{"root panic", []string{"fail panic: stopped"}},
		{"root goexit", []string{goexit}},
		{"branch panic", []string{"Before", "fail panic in a branch: stopped"}},
		{"branch goexit", []string{"Before", goexit}},
	}
	for _, tt := range tests {
		t.Run(tt.how, func(t *testing.T) {
			rt := newRuntime()
			got := rt.activate(activation(0, start("Stops", `"`+tt.how+`"`)))
			expect(t, "start", got, tt.want...)
			if details := got[len(got)-1].Failure.Details; !strings.Contains(details, "concurrency_test.go") {
				t.Errorf("details do not show the unit's stack:\n%s", details)
			}
			expect(t, "after the end", rt.activate(activation(1, resolve(1, `null`))))
		})
	}
}

func TestNothingRunsAfterTheEnd(t *testing.T) {
	t.Parallel()
	expect(t, "start", newRuntime().activate(activation(0, start("Abandons", `null`))), `complete "done"`)
}

func TestGoroutineIdentity(t *testing.T) {
	t.Parallel()
	self := goroutine()
	other := make(chan uintptr)
	go func() { other <- goroutine() }()
	if o := <-other; self == 0 || goroutine() != self || o == self || o == 0 {
		t.Fatalf("this goroutine is %#x, then %#x; another is %#x", self, goroutine(), o)
	}
}
