package durabox

import (
	"context"
	"errors"
)

// scratchPath is where the host gives an activity attempt its scratch
// directory, in its wasm instance (ABI.md, "Scratch space").
const scratchPath = "/scratch"

// ScratchDir returns the scratch directory of the activity attempt ctx
// runs, /scratch: a directory of its own, empty when the attempt starts
// and removed with everything in it when the attempt ends, however it
// ends, so that an activity that processes files need not pass their
// bytes through history. Use it as any directory:
//
//	dir, err := durabox.ScratchDir(ctx)
//	if err != nil {
//		return nil, err
//	}
//	f, err := os.CreateTemp(dir, "report-*.csv")
//
// Its files hold at most the host's limit (durabox serve --scratch-mib,
// 64 MiB by default): a write past it fails with "no space left on
// device". Nothing in it outlives the attempt: a retry starts empty.
//
// It returns an error outside an activity attempt (an orchestration has
// no files), when the host gives activities no scratch space
// (--scratch-mib 0), and outside the host's wasm sandbox (a worker
// outside the host, or a test that runs the activity in process), where
// os.MkdirTemp gives a directory of the machine's instead.
func ScratchDir(ctx context.Context) (string, error) {
	if _, ok := attemptOf(ctx); !ok {
		return "", errors.New("durabox: ScratchDir outside an activity: only an activity attempt has a scratch directory; pass the context the activity was given")
	}
	return scratchDir()
}
