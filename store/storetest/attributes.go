package storetest

import (
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/query"
)

// setAttributes runs a turn of instance id at now that sets attrs (and
// starts it, on its first turn).
func (f *fixture) setAttributes(id string, now time.Time, attrs ...abi.Attribute) {
	f.t.Helper()
	item := f.lockID(now, id)
	var events []engine.Event
	if item.HistoryLen == 0 {
		events = append(events, started(id, input(id)))
	}
	c := turn(item, events...)
	c.Attributes = attrs
	f.commit(c)
}

func str(name, v string) abi.Attribute {
	return abi.Attribute{Name: name, Type: abi.AttributeString, String: v}
}
func num(name string, v int64) abi.Attribute {
	return abi.Attribute{Name: name, Type: abi.AttributeInt, Int: v}
}

// attributes fails the test unless instance id's search attributes are
// want.
func (f *fixture) attributes(id string, want ...abi.Attribute) {
	f.t.Helper()
	got, err := f.s.Attributes(f.ctx, id)
	f.must(err, "Attributes")
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if string(abi.EncodeAttributes(got)) != string(abi.EncodeAttributes(want)) {
		f.t.Fatalf("search attributes of %s: %s; want %s", id, abi.EncodeAttributes(got), abi.EncodeAttributes(want))
	}
}

// testAttributes: the search attributes a turn sets are kept by type,
// replaced and removed by name, read back, and selected by filters
// (query.Parse) of every kind; a continue-as-new clears them, a purge
// removes them.
func testAttributes(f *fixture) {
	at := time.Date(2026, 11, 27, 20, 0, 0, 123456789, time.UTC)
	for _, id := range []string{"o1", "o2", "o3", "o4"} {
		f.createAt(id, orchestration, module, t0.Add(time.Duration(len(id)+int(id[1]))*time.Second))
	}
	all := []abi.Attribute{
		{Name: "amount", Type: abi.AttributeFloat, Float: 150.5},
		{Name: "count", Type: abi.AttributeInt, Int: 1<<62 + 1},
		str("customer", "c-42"),
		{Name: "due", Type: abi.AttributeTime, Time: at},
		{Name: "paid", Type: abi.AttributeBool, Bool: true},
		{Name: "tags", Type: abi.AttributeKeywords, Keywords: []string{"new", "vip"}},
	}
	f.setAttributes("o1", t0, all...)
	f.attributes("o1", all...)
	f.setAttributes("o2", t0, str("customer", "c-42"), num("amount", 50), abi.Attribute{Name: "paid", Type: abi.AttributeBool},
		abi.Attribute{Name: "tags", Type: abi.AttributeKeywords, Keywords: []string{"new"}})
	f.setAttributes("o3", t0, str("customer", "c-7"), num("amount", 500), abi.Attribute{Name: "due", Type: abi.AttributeTime, Time: at.Add(time.Hour)})
	f.setAttributes("o4", t0)
	// Replaced and removed by name; the others stay.
	f.enqueue("o2", raised("Next"))
	f.setAttributes("o2", t0.Add(time.Minute), num("amount", 75), abi.Attribute{Name: "tags"})
	f.attributes("o2", num("amount", 75), str("customer", "c-42"), abi.Attribute{Name: "paid", Type: abi.AttributeBool})

	for _, c := range []struct {
		where string
		want  []string
	}{
		{`customer = "c-42" AND amount > 100`, []string{"o1"}},
		{`customer = "c-42"`, []string{"o2", "o1"}},
		{`amount >= 75`, []string{"o3", "o2", "o1"}},
		{`amount < 75.5 OR customer = "c-7"`, []string{"o3", "o2"}},
		{`count = 4611686018427387905`, []string{"o1"}},
		{`paid = true`, []string{"o1"}},
		{`paid != TRUE`, []string{"o2"}},
		{`NOT paid = true`, []string{"o4", "o3", "o2"}},
		{`paid = 1`, nil},
		{`tags = "vip"`, []string{"o1"}},
		{`tags = "new"`, []string{"o1"}},
		{`tags != "vip"`, nil},
		{`due > "2026-11-27T20:30:00Z"`, []string{"o3"}},
		{`due <= "2026-11-27T21:00:01+01:00"`, []string{"o1"}},
		{`customer IN ("c-7", "c-9")`, []string{"o3"}},
		{`customer NOT IN ("c-7")`, []string{"o2", "o1"}},
		{`customer IS SET AND has(amount) AND due IS NOT SET`, []string{"o2"}},
		{`NOT has(customer)`, []string{"o4"}},
		{`(customer = "c-42" OR customer = "c-7") AND NOT (amount > 100 AND amount < 200)`, []string{"o3", "o2"}},
		{`customer > "c-5"`, []string{"o3"}},
		{`id = "o3" OR id IN ("o1")`, []string{"o3", "o1"}},
		{`name = "` + orchestration + `" AND status = "Running" AND status != "Pending"`, []string{"o4", "o3", "o2", "o1"}},
		{`created >= "` + t0.Add(53*time.Second).Format(time.RFC3339) + `" AND updated > "` + t0.Format(time.RFC3339) + `"`, []string{"o4", "o3"}},
		{`nothing = "x" OR nothing IS SET`, nil},
	} {
		e, err := query.Parse(c.where)
		f.must(err, "query.Parse "+c.where)
		if got := f.list(store.InstanceFilter{Where: e}); !slices.Equal(got, c.want) {
			f.t.Fatalf("ListInstances where %s = %q; want %q", c.where, got, c.want)
		}
	}
	// Counted and purged by a filter too.
	e, _ := query.Parse(`customer = "c-42"`)
	counts, err := f.s.CountInstances(f.ctx, store.InstanceFilter{Where: e})
	f.must(err, "CountInstances")
	if len(counts) != 1 || counts[0].Count != 2 {
		f.t.Fatalf("CountInstances where customer = \"c-42\": %+v; want 2 Running", counts)
	}

	// A continue-as-new clears them.
	f.enqueue("o3", raised("Next"))
	c := turn(f.lockID(t0.Add(time.Hour), "o3"), raised("Next"), engine.Event{Kind: engine.OrchestrationContinuedAsNew, Input: nextInput})
	c.Status, c.Attributes = engine.StatusContinuedAsNew, []abi.Attribute{str("customer", "c-8")}
	c.ContinueAsNew = &engine.ContinueAsNew{Input: nextInput, Started: started("o3", nextInput)}
	f.commit(c)
	f.attributes("o3")

	// A purge removes them: an instance that takes the id again has none.
	f.enqueue("o1", raised("Next"))
	c = turn(f.lockID(t0.Add(time.Hour), "o1"), completed(`"done"`))
	f.commit(c)
	f.must(f.s.Purge(f.ctx, "o1"), "Purge")
	f.attributes("o1")
	f.createAt("o1", orchestration, module, t0)
	f.attributes("o1")
	if got := f.list(store.InstanceFilter{Where: e}); !slices.Equal(got, []string{"o2"}) {
		f.t.Fatalf("after o1's purge, customer = \"c-42\" lists %q; want o2", got)
	}
}
