package durabox

import "github.com/durabox/durabox/abi"

// Patched reports whether this instance runs the code of the change id, so
// that code that changed can keep the old path for instances that took it
// before the change existed:
//
//	if ctx.Patched("charge-in-cents") {
//		err = ctx.CallActivity("ChargeCents", order.Cents).Get(nil)
//	} else {
//		err = ctx.CallActivity("Charge", order.Amount).Get(nil)
//	}
//
// It is true when the step is new (the orchestration gets here for the
// first time, on code that has the change), and when the step's history
// recorded the change; it is false when the orchestration replays a step
// that ran before the change existed. The first answer for an id holds for
// the rest of the execution, and a true one is recorded in history (a
// PatchRecorded event), so replays repeat it. So an instance that started
// on old code replays on the patched code exactly, and durabox upgrade finds
// it compatible.
//
// Once no running instance can have taken the old path (each finished, or
// durabox upgrade --dry-run finds none diverging without the question),
// drop the question and keep the new path: histories that recorded the
// change still replay, as their markers are skipped.
func (c *Context) Patched(id string) bool {
	c.rt.own("ctx.Patched")
	if id == "" {
		panic("durabox: Patched needs a change id")
	}
	rt := c.rt
	if v, ok := rt.patched[id]; ok {
		return v
	}
	v := askPatched(rt, id)
	rt.patched[id] = v
	if v {
		rt.command(abi.Command{Kind: abi.CommandPatch, Name: id})
	}
	return v
}
