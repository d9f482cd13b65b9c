package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
	"github.com/durabox/durabox/store/query"
)

// seedAttributes adds n Running or Completed instances with the search
// attributes customer ("c-0" to "c-999", by i mod 1000) and amount (i mod
// 500) with generate_series, and has PostgreSQL analyze the tables.
func seedAttributes(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	if err := s.PutModule(ctx, store.Module{Hash: "seed", Wasm: []byte("\x00asm"), Orchestrations: []string{"Order"}}); err != nil {
		t.Fatal(err)
	}
	for _, statement := range []string{
		`INSERT INTO instances (id, name, module_hash, execution_id, status, created_at, updated_at)
			SELECT format('i-%s', lpad(i::text, 8, '0')), 'Order', 'seed', 1, CASE i % 4 WHEN 0 THEN 'Completed' ELSE 'Running' END, i * 1000000000, i * 1000000000
			FROM generate_series(1, $1::bigint) i`,
		`INSERT INTO instance_attributes (instance_id, name, type, str)
			SELECT format('i-%s', lpad(i::text, 8, '0')), 'customer', 'string', 'c-' || (i % 1000) FROM generate_series(1, $1::bigint) i`,
		`INSERT INTO instance_attributes (instance_id, name, type, num, ival)
			SELECT format('i-%s', lpad(i::text, 8, '0')), 'amount', 'int', i % 500, i % 500 FROM generate_series(1, $1::bigint) i`,
	} {
		if _, err := s.pool.Exec(ctx, statement, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE instances; ANALYZE instance_attributes`); err != nil {
		t.Fatal(err)
	}
}

// TestFilterUsesIndexes: on 20,000 instances, a filter on search
// attributes reads instance_attributes through its indexes (never a
// sequential scan of it), as PostgreSQL's plan of the list's query shows,
// and finds the instances it should.
func TestFilterUsesIndexes(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	s := openTest(t, Options{})
	seedAttributes(t, s, 20000)
	ctx := context.Background()
	for _, c := range []struct {
		where string
		want  []string // indexes the plan must name
		count int
	}{
		{`customer = "c-42" AND amount < 100`, []string{"instance_attributes_str"}, 20},
		{`customer IN ("c-1", "c-2") OR amount = 7`, []string{"instance_attributes_str", "instance_attributes_num"}, 80},
		{`has(customer) AND status = "Completed" AND customer = "c-4"`, []string{"instance_attributes_str"}, 20},
	} {
		e, err := query.Parse(c.where)
		if err != nil {
			t.Fatal(err)
		}
		w := sqlstore.NewWhere(dialect.Placeholder)
		w.Filter(store.InstanceFilter{Where: e})
		q, err := sqlstore.ListQuery(w, store.InstanceQuery{Limit: 1000}, sqlstore.SummaryColumns, dialect.Seq)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.pool.Query(ctx, `EXPLAIN `+q, w.Args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", c.where, text)
		for _, index := range c.want {
			if !strings.Contains(text, index) {
				t.Errorf("%s: the plan does not use %s:\n%s", c.where, index, text)
			}
		}
		if strings.Contains(text, "Seq Scan on instance_attributes") {
			t.Errorf("%s: the plan scans instance_attributes:\n%s", c.where, text)
		}
		page, err := s.ListInstances(ctx, store.InstanceQuery{Filter: store.InstanceFilter{Where: e}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Instances) != c.count {
			t.Errorf("%s: %d instances; want %d", c.where, len(page.Instances), c.count)
		}
	}
}
