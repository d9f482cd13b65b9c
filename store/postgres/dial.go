package postgres

import (
	"net"
	"strconv"
	"time"
)

// deadConnection is how long a connection may go without the server
// acknowledging what it was sent, or answering its keepalives, before it
// is closed, and the pool replaces it when it is next needed. A network
// that drops every packet (a partition, a server's machine gone without a
// word) otherwise leaves a call on it waiting for the kernel's
// retransmissions, about a quarter of an hour, and a host resumes that late
// once the network heals.
const deadConnection = 10 * time.Second

// dialer dials the server's connections with keepalives every few seconds
// and, where the system has it, TCP_USER_TIMEOUT (dial_linux.go), both
// bounded by deadConnection.
func dialer() *net.Dialer {
	return &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: deadConnection / 2, Interval: deadConnection / 4, Count: 2},
		Control:         userTimeout,
	}
}

// serverSideDeadConnection are the settings each connection asks of the
// server, so that its side finds a dead connection as soon: a backend whose
// host was cut off mid-transaction holds that transaction's row locks, on
// which every other host's commits to those rows wait, until the server
// finds the connection dead, two hours later by default (the system's
// keepalive time). The server ignores them on a socket connection.
var serverSideDeadConnection = map[string]string{
	"tcp_keepalives_idle":     strconv.Itoa(int(deadConnection.Seconds() / 2)),
	"tcp_keepalives_interval": strconv.Itoa(int(deadConnection.Seconds() / 4)),
	"tcp_keepalives_count":    "2",
	"tcp_user_timeout":        strconv.Itoa(int(deadConnection.Milliseconds())),
}
