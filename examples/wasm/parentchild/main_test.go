package main

import (
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func TestParent(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Parent", []string{"books", "lamp"}, "order")
	var got string
	if err := inst.Result(&got); err != nil {
		t.Fatal(err)
	}
	if got != "books shipped; lamp shipped" {
		t.Fatalf("result %q", got)
	}
	// Two Ship children, then the detached Audit, each with its id
	// derived from the parent's.
	var ids []string
	for _, c := range inst.Children() {
		ids = append(ids, c.ID())
	}
	if len(ids) != 3 || ids[0] != "order~1:2" || ids[1] != "order~1:3" || ids[2] != "order~1:6" {
		t.Fatalf("children %v", ids)
	}
	var audit string
	if err := env.Instance("order~1:6").Result(&audit); err != nil || audit != "audited an order of 2 parcels" {
		t.Fatalf("audit %q, %v", audit, err)
	}
}

func TestParentFailsWithAChild(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Parent", []string{"books", "lost"})
	want := `child orchestration "Ship" failed: activity "Dispatch" failed: parcel "lost" cannot be found`
	if f := inst.Failure(); inst.Status() != engine.StatusFailed || f == nil || f.Message != want {
		t.Fatalf("status %s, failure %+v", inst.Status(), f)
	}
	// No audit for a failed order.
	if n := len(inst.Children()); n != 2 {
		t.Fatalf("%d children, want 2", n)
	}
}
