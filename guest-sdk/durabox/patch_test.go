package durabox

import (
	"reflect"
	"testing"

	"github.com/durabox/durabox/abi"
)

func init() {
	// Charges in cents once patched; asks twice, the second time after an
	// activity.
	RegisterOrchestration("Charge", func(ctx *Context, _ any) ([]bool, error) {
		first := ctx.Patched("cents")
		if err := ctx.CallActivity("Check", nil).Get(nil); err != nil {
			return nil, err
		}
		return []bool{first, ctx.Patched("cents")}, nil
	})
}

func TestPatched(t *testing.T) {
	t.Parallel()
	patch := abi.Command{Kind: abi.CommandPatch, Seq: 1, Name: "cents"}
	check := func(seq uint64) abi.Command {
		return abi.Command{Kind: abi.CommandScheduleActivity, Seq: seq, Name: "Check", Input: []byte("null")}
	}
	tests := []struct {
		name string
		// start is the first activation; its step's commands are wanted.
		start      *abi.Activation
		wantStart  []abi.Command
		wantResult string
	}{
		{"a new step takes the change, and records it",
			activation(0, start("Charge", `null`)), []abi.Command{patch, check(2)}, `[true,true]`},
		{"a replayed step whose history recorded it takes it",
			&abi.Activation{Replaying: true, Patches: []string{"other", "cents"}, Jobs: []abi.Job{start("Charge", `null`)}}, []abi.Command{patch, check(2)}, `[true,true]`},
		{"a replayed step from before the change does not, for the rest of the execution",
			&abi.Activation{Replaying: true, Patches: []string{"other"}, Jobs: []abi.Job{start("Charge", `null`)}}, []abi.Command{check(1)}, `[false,false]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime()
			if got := rt.activate(tt.start); !reflect.DeepEqual(got, tt.wantStart) {
				t.Fatalf("first step %+v, want %+v", got, tt.wantStart)
			}
			seq := tt.wantStart[len(tt.wantStart)-1].Seq
			// The next step is new either way: the first answer holds.
			got := rt.activate(activation(1, abi.Job{Kind: abi.JobResolveActivity, Seq: seq, Result: []byte(`"ok"`)}))
			want := []abi.Command{{Kind: abi.CommandComplete, Seq: seq + 1, Output: []byte(tt.wantResult)}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("second step %+v, want %+v", got, want)
			}
		})
	}
}
