package sqlite

import "database/sql"

// writeTx is the SQLite statements that the logic both SQL stores share
// (store/internal/sqlstore) runs in a write transaction: it is a
// sqlstore.TurnTx, OperateTx and ResetTx.
type writeTx struct {
	tx *sql.Tx
	// s is the store, whose instance locks are in memory.
	s *Store
}
