// Package sqlstore is the logic the SQL stores (store/sqlite and
// store/postgres) share, so that they differ only in their SQL and driver
// calls: what a turn's commit checks and in which order it writes, the
// encoding of times and message visibility, and the list cursor.
//
// A store gives its statements through small interfaces (TurnTx); the
// functions here decide what to run and check what comes back. Error texts
// carry no store name: each store wraps them behind its own ("sqlite: …",
// "postgres: …").
package sqlstore
