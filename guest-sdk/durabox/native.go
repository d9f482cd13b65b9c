//go:build !wasip1

package durabox

import (
	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// Outside wasm, the runtime is driven by the test kit (package durtest)
// through package seam; a wasm instance drives it through the exports.
func init() {
	seam.NewGuest = func() func(*abi.Activation) []abi.Command { return newRuntime().activate }
	seam.RunActivity = func(req *abi.ActivityRequest, fn seam.Func) *abi.ActivityResult {
		if fn == nil {
			return runActivity(req)
		}
		return callActivity(req, fn)
	}
	seam.Manifest = manifest
}
