package sqlstore

import "testing"

func TestRebind(t *testing.T) {
	t.Parallel()
	numbered := &Dialect{Numbered: true}
	for _, c := range []struct {
		name, query, want string
	}{
		{"in order", `SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{"numbered stay", `SELECT ?1 WHERE x = ?1 AND y = ?2`, `SELECT $1 WHERE x = $1 AND y = $2`},
		{"quoted left alone", `SELECT json_extract(p, '$.k?') FROM t WHERE a = ?`, `SELECT json_extract(p, '$.k?') FROM t WHERE a = $1`},
		{"none", `SELECT 1`, `SELECT 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := numbered.Rebind(c.query); got != c.want {
				t.Errorf("Rebind(%q) = %q, want %q", c.query, got, c.want)
			}
			if got := (&Dialect{}).Rebind(c.query); got != c.query {
				t.Errorf("unnumbered Rebind(%q) = %q, want it unchanged", c.query, got)
			}
		})
	}
}
