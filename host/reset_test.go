package host

import (
	"context"
	"testing"

	"github.com/durabox/durabox/host/api"
)

// TestResetKeepsTheCustomStatusOfTheKeptEvents resets an instance whose
// discarded events set another custom status: right after the reset, before
// any turn of the new execution, the instance shows the status the kept
// events set, and the step the reset runs again sets the other anew.
func TestResetKeepsTheCustomStatusOfTheKeptEvents(t *testing.T) {
	t.Parallel()
	h := conformanceHost(t, Options{})
	ctx := context.Background()
	startEach(t, h, `null`, "Statuses")
	drive(t, h, conformanceNow, false)
	if err := h.Raise(ctx, "Statuses", "go", nil, false); err != nil {
		t.Fatal(err)
	}
	drive(t, h, conformanceNow, false)
	status := func() string {
		t.Helper()
		inst, err := h.Instance(ctx, "Statuses")
		if err != nil {
			t.Fatal(err)
		}
		return inst.CustomStatus
	}
	// 1 started, 2 status "one", 3 waits, 4 go, 5 status "two", 6 waits
	if got := status(); got != "two" {
		t.Fatalf("custom status %q before the reset, want %q", got, "two")
	}
	if _, err := h.Reset(ctx, "Statuses", api.ResetRequest{ToEvent: 4}); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "one" {
		t.Fatalf("custom status %q after the reset to event 4, want %q, the status events 1 to 4 set (not one the discarded events set)", got, "one")
	}
	drive(t, h, conformanceNow, false)
	if got := status(); got != "two" {
		t.Fatalf("custom status %q once the step of event 4 ran again, want %q", got, "two")
	}
}
