package durabox

import (
	"testing"

	"github.com/durabox/durabox/abi"
)

func init() {
	RegisterOrchestration("Loop", func(ctx *Context, _ any) (int, error) {
		sum := 0
		for {
			v, err := Call[int](ctx, "Hello", "x")
			if err != nil {
				return 0, err
			}
			sum += v
		}
	})
}

// BenchmarkActivate measures one activation of the guest runtime natively:
// an activity result that wakes the orchestration, which calls the next
// activity. (In wasm it costs more; this is the SDK's own share.)
func BenchmarkActivate(b *testing.B) {
	rt := newRuntime()
	cmds := rt.activate(activation(0, start("Loop", `null`)))
	for b.Loop() {
		seq := cmds[0].Seq
		raw := abi.EncodeActivation(activation(1, abi.Job{Kind: abi.JobResolveActivity, Seq: seq, Result: []byte(`1`)}))
		a, err := abi.DecodeActivation(raw)
		if err != nil {
			b.Fatal(err)
		}
		cmds = rt.activate(a)
		abi.EncodeActivationResult(&abi.ActivationResult{Commands: cmds})
	}
}
