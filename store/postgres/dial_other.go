//go:build !linux

package postgres

import "syscall"

// userTimeout does nothing where TCP_USER_TIMEOUT is Linux's only: the
// keepalives alone find a dead connection.
func userTimeout(string, string, syscall.RawConn) error { return nil }
