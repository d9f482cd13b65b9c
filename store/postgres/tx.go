package postgres

import "github.com/jackc/pgx/v5"

// writeTx is the PostgreSQL statements that the logic both SQL stores share
// (store/internal/sqlstore) runs in a write transaction: it is a
// sqlstore.TurnTx, OperateTx and ResetTx.
type writeTx struct{ tx pgx.Tx }
