package postgres

import (
	"net"
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
