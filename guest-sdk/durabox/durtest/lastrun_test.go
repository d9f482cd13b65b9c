package durtest_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func init() {
	// Tally counts on from the last run's count, and says how the last run
	// ended.
	durabox.RegisterOrchestration("Tally", func(ctx *durabox.Context, _ any) (string, error) {
		var last int
		ok, err := ctx.LastRun(&last)
		var failed *durabox.LastRunError
		switch {
		case errors.As(err, &failed):
			return "after a failure: " + failed.Message, nil
		case err != nil:
			return "", err
		case !ok:
			return "first", nil
		}
		return "after " + strconv.Itoa(last), nil
	})
}

// TestLastRun: StartRun hands an orchestration the last run's result or
// failure, which ctx.LastRun reads (and replays); Start hands none.
func TestLastRun(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	expectResult(t, env.Start("Tally", nil), `"first"`)
	expectResult(t, env.StartRun("Tally", nil, 4, ""), `"after 4"`)
	expectResult(t, env.StartRun("Tally", nil, nil, "the database was down"), `"after a failure: the database was down"`)
	bad := env.StartRun("Tally", nil, "four", "")
	if f := bad.Failure(); f == nil || f.Message != `durabox: the last run's result "four" does not decode into *int: json: cannot unmarshal string into Go value of type int` {
		t.Fatalf("a last result that does not decode: %+v", f)
	}
}
