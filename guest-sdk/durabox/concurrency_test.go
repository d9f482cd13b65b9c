package durabox

import (
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func init() {
	// Parallel: two branches, each calls a then b; the root waits for both.
	RegisterOrchestration("Parallel", func(ctx *Context, _ any) (string, error) {
		done := []*Future{}
		for _, name := range []string{"A", "B"} {
			f := &Future{rt: ctx.rt}
			done = append(done, f)
			ctx.Go(func(ctx *Context) {
				first, _ := Call[string](ctx, name+"1", nil)
				second, _ := Call[string](ctx, name+"2", first)
				f.settle([]byte(`"`+second+`"`), nil)
			})
		}
		// A non-pausing call in the same step as the spawns: it is emitted
		// before the branches run, since they start in the next round.
		ctx.CallActivity("Root", ctx.Now().Unix())
		out, err := All[string](done...)
		return out[0] + out[1], err
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
