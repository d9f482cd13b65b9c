//go:build !wasip1

package durabox

// hostHeartbeat is the heartbeat of an activity the test kit runs in
// process, where no host keeps it: it is taken, and goes nowhere.
func hostHeartbeat([]byte) error { return nil }
