package sqlite

import (
	"context"
	"database/sql"

	"github.com/durabox/durabox/store/internal/sqlstore"
)

// writeTx is the SQLite statements that the logic both SQL stores share
// (store/internal/sqlstore) runs in a write transaction: it is a
// sqlstore.TurnTx, OperateTx and ResetTx. The statements both stores say
// alike are sqlstore.Tx's; those here hold locks and leases in memory.
type writeTx struct {
	// Tx is the statements both stores say alike.
	sqlstore.Tx
	tx txConn
	// s is the store, whose instance locks are in memory.
	s *Store
}

// txConn is a connection in a transaction the store began and ends with
// statements of its own (BEGIN, COMMIT, ROLLBACK): a *sql.Conn, not a
// *sql.Tx. database/sql starts a goroutine to watch every *sql.Tx, and
// another for every query in one; on a hot path those hand-offs between
// threads cost more CPU than the statements (RATIONALE, "Why does the
// SQLite store begin its transactions itself?").
type txConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// writeTx returns the statements of the write transaction tx.
func (s *Store) writeTx(tx txConn) writeTx {
	return writeTx{sqlstore.Tx{DB: sqlDB{tx}, D: s.dialect}, tx, s}
}
