package durtest

import (
	"context"

	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// MockActivity makes the Env run fn for every call of the activity name,
// instead of the activity the module registers (if it registers one). fn
// runs as the real one would: its input decoded from the JSON the
// orchestration sent, its result encoded, a panic turned into a failure,
// durabox.ActivityInfoFrom(ctx) set. Its error fails the call, which the
// orchestration sees as a *durabox.ActivityError.
func MockActivity[In, Out any](e *Env, name string, fn func(ctx context.Context, input In) (Out, error)) {
	e.mocks[name] = seam.Adapt("activity", name, fn)
}
