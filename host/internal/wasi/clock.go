package wasi

import (
	"context"
	"time"
)

// The clocks of clock_time_get; the CPU-time clocks (2 and 3) are not
// supported.
const (
	clockRealtime  = 0
	clockMonotonic = 1
)

// resolution is what clock_res_get reports for both clocks, in nanoseconds.
const resolution = 1

func clockResGet(_ context.Context, _ *Env, m Memory, a []uint64) Errno {
	if errno := clockID(a[0]); errno != ESUCCESS {
		return errno
	}
	return fault(putU64(m, uint32(a[1]), resolution))
}

func clockTimeGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	if errno := clockID(a[0]); errno != ESUCCESS {
		return errno
	}
	now := e.monotonic()
	if uint32(a[0]) == clockRealtime {
		now = e.wallClock()
	}
	return fault(putU64(m, uint32(a[2]), uint64(now)))
}

// clockID checks a clock id: the CPU-time clocks are not supported, and
// there are no others.
func clockID(id uint64) Errno {
	switch uint32(id) {
	case clockRealtime, clockMonotonic:
		return ESUCCESS
	case 2, 3:
		return ENOTSUP
	}
	return EINVAL
}

func (e *Env) wallClock() int64 {
	if e.deterministic {
		return e.logical
	}
	return time.Now().UnixNano()
}

func (e *Env) monotonic() int64 {
	if e.deterministic {
		return e.mono
	}
	return int64(time.Since(e.start)) + 1
}
