package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
	"github.com/durabox/durabox/store/query"
)

// seedAttributes adds n Running or Completed instances with the search
// attributes customer ("c-0" to "c-999", by i mod 1000) and amount (i mod
// 500) in bulk SQL, and has SQLite analyze the tables.
func seedAttributes(t testing.TB, s *Store, n int) {
	t.Helper()
	if err := s.PutModule(context.Background(), store.Module{Hash: "seed", Wasm: []byte("\x00asm"), Orchestrations: []string{"Order"}}); err != nil {
		t.Fatal(err)
	}
	const numbers = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) `
	for _, statement := range []string{
		numbers + `INSERT INTO instances (id, name, module_hash, execution_id, status, created_at, updated_at)
			SELECT printf('i-%08d', i), 'Order', 'seed', 1, CASE i % 4 WHEN 0 THEN 'Completed' ELSE 'Running' END, i * 1000000000, i * 1000000000 FROM n`,
		numbers + `INSERT INTO instance_attributes (instance_id, name, type, str) SELECT printf('i-%08d', i), 'customer', 'string', 'c-' || (i % 1000) FROM n`,
		numbers + `INSERT INTO instance_attributes (instance_id, name, type, num, ival) SELECT printf('i-%08d', i), 'amount', 'int', i % 500, i % 500 FROM n`,
	} {
		if _, err := s.db.Exec(statement, n); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.db.Exec(`ANALYZE`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestFilterUsesIndexes: on 20,000 instances, a filter on search
// attributes reads instance_attributes through its indexes (never a scan
// of the table), as SQLite's plan of the list's query shows, and finds
// the instances it should.
func TestFilterUsesIndexes(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	seedAttributes(t, s, 20000)
	for _, c := range []struct {
		where string
		want  []string // indexes the plan must name
		count int
	}{
		{`customer = "c-42" AND amount < 100`, []string{"instance_attributes_str (name=? AND str=?)", "instance_attributes_num (name=? AND num<?)"}, 20},
		{`customer IN ("c-1", "c-2") OR amount = 7`, []string{"instance_attributes_str (name=? AND str=?)", "instance_attributes_num (name=? AND num=?)"}, 80},
		{`has(customer) AND status = "Completed" AND customer = "c-4"`, []string{"(name=?)", "instance_attributes_str (name=? AND str=?)"}, 20},
	} {
		e, err := query.Parse(c.where)
		if err != nil {
			t.Fatal(err)
		}
		w := sqlstore.NewWhere(s.dialect.Placeholder)
		w.Filter(store.InstanceFilter{Where: e})
		q, err := sqlstore.ListQuery(w, store.InstanceQuery{Limit: 1000}, sqlstore.SummaryColumns, s.dialect.Seq)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+q, w.Args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", c.where, text)
		for _, index := range c.want {
			if !strings.Contains(text, index) {
				t.Errorf("%s: the plan does not use %s:\n%s", c.where, index, text)
			}
		}
		if strings.Contains(text, "SCAN a") {
			t.Errorf("%s: the plan scans instance_attributes:\n%s", c.where, text)
		}
		page, err := s.ListInstances(context.Background(), store.InstanceQuery{Filter: store.InstanceFilter{Where: e}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Instances) != c.count {
			t.Errorf("%s: %d instances; want %d", c.where, len(page.Instances), c.count)
		}
	}
}
