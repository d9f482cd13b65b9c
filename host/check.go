package host

import (
	"context"

	"github.com/durabox/durabox/abi"
)

// Runtimes lists the WebAssembly runtimes a host can run guests on, the
// default first.
var Runtimes = []string{RuntimeWazero, RuntimeWasmtime}

// RuntimeCheck is what CheckModule found on one runtime.
type RuntimeCheck struct {
	Runtime string
	// Err is why a host on Runtime would refuse the module, with Deploy's
	// words (it wraps api.ErrBadModule); nil when it would deploy it.
	Err error
}

// CheckReport is what CheckModule found.
type CheckReport struct {
	// Runtimes holds one check per runtime, in the order asked.
	Runtimes []RuntimeCheck
	// Manifest is what the module registers, as the first runtime that
	// accepts it read it; nil when none does.
	Manifest *abi.Manifest
}

// Err returns the first refusal in r, nil when every runtime accepts the
// module.
func (r *CheckReport) Err() error {
	for _, c := range r.Runtimes {
		if c.Err != nil {
			return c.Err
		}
	}
	return nil
}

// CheckModule checks a module exactly as Deploy does on each of runtimes
// (nil means Runtimes), with default Options: it compiles and instruments
// it, checks its size, its imports against what a host provides (among
// them sched_yield), its exports, its ABI version, and asks a fresh
// instance what it registers and checks those names. It needs no store
// and keeps nothing. A refusal is in the report; the error is for a
// runtime that is unknown or does not start. durabox check and durabox
// build run it.
func CheckModule(ctx context.Context, wasm []byte, runtimes []string) (*CheckReport, error) {
	if runtimes == nil {
		runtimes = Runtimes
	}
	report := &CheckReport{}
	for _, name := range runtimes {
		p, refusal, err := openProbe(ctx, wasm, Options{Runtime: name})
		if err != nil {
			return nil, err
		}
		if p != nil {
			if report.Manifest == nil {
				report.Manifest = p.manifest
			}
			p.Close(ctx)
		}
		report.Runtimes = append(report.Runtimes, RuntimeCheck{Runtime: name, Err: refusal})
	}
	return report, nil
}
