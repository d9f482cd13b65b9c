package wasi

import (
	"context"

	"github.com/durabox/durabox/abi"
)

// PatchFunctions answer an orchestration that asks whether it takes a
// change's new code path (module abi.ImportModule).
var PatchFunctions = []Function{
	{Name: abi.ImportPatched, Params: params(2), Call: patched},
}

// SetActivation tells a deterministic environment which activation the
// guest applies next: its logical time (as SetTime) and what the patched
// import answers. A real environment ignores it.
func (e *Env) SetActivation(a *abi.Activation) {
	e.SetTime(a.Time)
	e.activation = a
	e.yields = 0
}

// patched answers abi.ImportPatched from the activation being applied: 1
// when the orchestration takes the change's new path. An activity, or an
// id outside memory, gets 0.
func patched(_ context.Context, e *Env, m Memory, a []uint64) uint32 {
	id, ok := m.Read(uint32(a[0]), uint32(a[1]))
	if !ok || !e.deterministic || e.activation == nil || !e.activation.Patched(string(id)) {
		return 0
	}
	return 1
}
