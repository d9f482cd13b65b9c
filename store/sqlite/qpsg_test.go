package sqlite

import (
	"database/sql"
	"testing"
)

// TestStablePlansOnEveryConnection: the write connection and the read
// connections have the query planner stability guarantee on (qpsg.go).
func TestStablePlansOnEveryConnection(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	for name, db := range map[string]*sql.DB{"write": s.db, "read": s.readers.DB} {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Raw(func(dc any) error {
			on, err := stablePlans(dc.(*conn).SQLiteConn, -1)
			if err == nil && !on {
				t.Errorf("the %s connection plans without the guarantee", name)
			}
			return err
		})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}
