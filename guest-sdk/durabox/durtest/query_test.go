package durtest_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func init() {
	// Count counts to n, one step an hour, answering Progress (how far it
	// is, plus the argument) and, when asked to misbehave, Misbehave and
	// Panic.
	durabox.RegisterOrchestration("Count", func(ctx *durabox.Context, n int) (int, error) {
		done := 0
		durabox.HandleQuery(ctx, "Progress", func(plus int) (int, error) { return done + plus, nil })
		durabox.HandleQuery(ctx, "Refuse", func(struct{}) (int, error) { return 0, errors.New("not now") })
		durabox.HandleQuery(ctx, "Misbehave", func(struct{}) (int, error) {
			ctx.SetCustomStatus("changed by a query")
			return 0, nil
		})
		durabox.HandleQuery(ctx, "Panic", func(struct{}) (int, error) { panic("boom") })
		for done < n {
			if err := ctx.Sleep(time.Hour); err != nil {
				return 0, err
			}
			done++
		}
		return done, nil
	})
}

func TestQueriesReadTheStateAndWriteNothing(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Count", 3)
	env.Advance(time.Hour)
	before := inst.History()
	var got int
	if err := inst.Query("Progress", 10, &got); err != nil || got != 11 {
		t.Fatalf("Progress(10) = %d, %v; want 11", got, err)
	}
	for _, tc := range []struct{ name, want string }{
		{"Refuse", `query "Refuse" of instance ` + inst.ID() + ` failed: not now`},
		{"Misbehave", `the handler of query "Misbehave" called ctx.SetCustomStatus: a query only reads`},
		{"Panic", `panic in the handler of query "Panic": boom`},
		{"Nope", `handles no query "Nope"; it handles ["Misbehave" "Panic" "Progress" "Refuse"]`},
	} {
		if err := inst.Query(tc.name, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("query %s: %v; want an error holding %q", tc.name, err, tc.want)
		}
	}
	if !slices.Equal(describe(inst.History()), describe(before)) || inst.CustomStatus() != "" {
		t.Fatalf("the queries changed the instance: history %v, custom status %q", describe(inst.History()), inst.CustomStatus())
	}
	inst.AdvanceToEnd()
	expectResult(t, inst, `3`)
	if err := inst.Query("Progress", 0, &got); err != nil || got != 3 {
		t.Fatalf("Progress of the finished instance = %d, %v; want 3", got, err)
	}
}
