package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store/internal/sqlstore"
)

// writeTx is the PostgreSQL statements that the logic both SQL stores share
// (store/internal/sqlstore) runs in a write transaction: it is a
// sqlstore.TurnTx, OperateTx and ResetTx. The statements both stores say
// alike are sqlstore.Tx's; those here hold locks and leases in rows.
type writeTx struct {
	sqlstore.Tx
	tx pgx.Tx
	// parent, when not nil, is set by Locked to whether the instance it
	// locked has a parent (to announce its end: watch.go).
	parent *bool
}

func newWriteTx(tx pgx.Tx) writeTx {
	return writeTx{Tx: sqlstore.Tx{DB: sqlDB{tx}, D: dialect}, tx: tx}
}

// sqlStore is the operations written once (sqlstore.Store), which Store
// embeds: its modules, instance reads, enqueues and purges.
type sqlStore = sqlstore.Store
