package durtest_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func init() {
	// Tag sets the attributes of its input, one step after the other,
	// and waits for "Done".
	durabox.RegisterOrchestration("Tag", func(ctx *durabox.Context, steps []string) (string, error) {
		for _, s := range steps {
			switch s {
			case "all":
				ctx.SetAttributes(map[string]any{"customer": "c-42", "amount": 150.5, "count": 3, "paid": true,
					"due": time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC), "tags": []string{"new", "vip"}})
			case "change":
				ctx.SetAttributes(map[string]any{"amount": int64(75), "tags": nil})
			case "a struct":
				ctx.SetAttributes(map[string]any{"order": struct{}{}})
			case "a bad name":
				ctx.SetAttributes(map[string]any{"status": "x"})
			case "too many":
				for i := range abi.MaxAttributes + 1 {
					ctx.SetAttributes(map[string]any{"a" + strconv.Itoa(i): i})
				}
			}
		}
		return durabox.Await[string](ctx.WaitEvent("Done"))
	})
}

func TestSetAttributes(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Tag", []string{"all", "change"})
	got := string(abi.EncodeAttributes(inst.Attributes()))
	want := `{"amount":{"int":75},"count":{"int":3},"customer":{"string":"c-42"},"due":{"time":"2026-11-27T20:00:00Z"},"paid":{"bool":true}}`
	if got != want {
		t.Fatalf("attributes %s; want %s", got, want)
	}
	expectHistory(t, inst, `OrchestrationStarted("Tag", ["all","change"])`,
		`AttributesSet({"amount":{"float":150.5},"count":{"int":3},"customer":{"string":"c-42"},"due":{"time":"2026-11-27T20:00:00Z"},"paid":{"bool":true},"tags":{"keywords":["new","vip"]}})`,
		`AttributesSet({"amount":{"int":75},"tags":null})`, `ExternalSubscribed("Done")`)
}

func TestSetAttributesRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ step, want string }{
		{"a struct", `panic: durabox: ctx.SetAttributes: attribute "order" is a struct {}; a search attribute is a string, an integer, a float, a bool, a time.Time or a []string (nil removes it)`},
		{"a bad name", `engine: the orchestration's command 1 is refused: search attribute name "status" is reserved: a search attribute's name is a letter or _ followed by letters, digits or _, at most 64 bytes, and not one of status, name, id, created, updated, has, and, or, not, in, is, set, true, false`},
		{"too many", `engine: the orchestration's command 65 is refused: the instance would hold 65 search attributes; it holds at most 64 (remove some with a nil value)`},
	} {
		t.Run(c.step, func(t *testing.T) {
			t.Parallel()
			env := durtest.New(t, durtest.Options{})
			inst := env.Start("Tag", []string{c.step})
			expectFailure(t, inst, engine.StatusFailed, c.want)
		})
	}
}
