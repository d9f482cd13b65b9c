package postgres

import "github.com/durabox/durabox/store/internal/sqlstore"

// writeTx is the PostgreSQL statements that the logic both SQL stores share
// (store/internal/sqlstore) runs in a write transaction: it is a
// sqlstore.TurnTx, OperateTx and ResetTx. The statements both stores say
// alike are sqlstore.Tx's; those here hold locks and leases in rows.
type writeTx struct {
	sqlstore.Tx
	tx *pipeTx
	// parent, when not nil, is set by Locked to whether the instance it
	// locked has a parent (to announce its end: watch.go).
	parent *bool
	// locked, when not nil, is the instance this transaction has locked
	// and read already, which Locked returns without asking again.
	locked *sqlstore.Locked
	// lease, when not nil, is the lease QueueActivities gives the tasks
	// it queues on the host's own queue.
	lease *taskLease
	// created is set when the transaction inserted the instance as its
	// turn leaves it (CreateAndTurn): Finish has nothing left to write.
	created bool
}

func newWriteTx(tx *pipeTx) writeTx {
	return writeTx{Tx: sqlstore.Tx{DB: sqlDB{tx}, D: dialect}, tx: tx}
}

// sqlStore is the operations written once (sqlstore.Store), which Store
// embeds: its modules, instance reads, enqueues and purges.
type sqlStore = sqlstore.Store
