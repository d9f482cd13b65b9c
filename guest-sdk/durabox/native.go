//go:build !wasip1

package durabox

import (
	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// Outside wasm, the runtime is driven by the test kit (package durtest)
// through package seam; a wasm instance drives it through the exports.
func init() {
	seam.NewGuest = func() seam.Guest {
		rt := newRuntime()
		return seam.Guest{Activate: func(a *abi.Activation) *abi.ActivationResult { return rt.result(rt.activate(a)) }, Query: func(req *abi.QueryRequest) *abi.QueryResult { return rt.query(req.Name, req.Input) }}
	}
	seam.RunActivity = func(req *abi.ActivityRequest, fn seam.Func) *abi.ActivityResult {
		if fn == nil {
			return runActivity(req)
		}
		return callActivity(req, fn)
	}
	seam.Manifest = manifest
}
