package postgres

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// userTimeout sets TCP_USER_TIMEOUT on a TCP connection: data the server
// has not acknowledged for deadConnection closes it.
func userTimeout(network, _ string, c syscall.RawConn) error {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil
	}
	var err error
	if ctlErr := c.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(deadConnection.Milliseconds()))
	}); ctlErr != nil {
		return ctlErr
	}
	return err
}
