//go:build !wasip1

package durabox

// askPatched answers from the activation, which the test kit hands over as
// the engine made it, patches included (ABI.md, "Patches").
func askPatched(rt *runtime, id string) bool { return rt.activation.Patched(id) }
