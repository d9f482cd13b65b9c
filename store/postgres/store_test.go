package postgres

import (
	"testing"

	"github.com/durabox/durabox/store/storetest"
)

// TestAuditCommitsUnsynced: an audit record adds no wait for the WAL's
// flush to the path of the change it records.
func TestAuditCommitsUnsynced(t *testing.T) {
	t.Parallel()
	var o storetest.Observed
	s := openTest(t, Options{OnCommit: o.OnCommit})
	storetest.CommitsOfAudit(t, s, &o)
}
