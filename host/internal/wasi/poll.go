package wasi

import (
	"context"
	"encoding/binary"
	"math"
	"time"
)

// Layout of poll_oneoff's subscriptions (48 bytes) and events (32 bytes).
const (
	subscriptionSize = 48
	eventSize        = 32

	eventTypeClock   = 0
	eventTypeFdRead  = 1
	eventTypeFdWrite = 2

	subClockAbsTime = 1
	eventHangup     = 1
)

// maxWaits is how many times a deterministic guest may wait on the clock in
// one call before it is stopped with ErrBlockingSleep. The Go runtime waits
// a few times on its own while it dies (see Env.TakeSleep); a guest that
// waits more is sleeping in a loop, and would otherwise spin through virtual
// time until its deadline.
const maxWaits = 64

// pollOneoff answers every fd subscription at once: stdin is at its end,
// stdout and stderr are writable, any other fd is EBADF. Clock subscriptions
// already due fire at once too. If only clocks remain, the first one due
// fires after a wait (see Env.wait).
func pollOneoff(ctx context.Context, e *Env, m Memory, a []uint64) Errno {
	in, out, n := uint32(a[0]), uint32(a[1]), uint32(a[2])
	if n == 0 {
		return EINVAL
	}
	subs, ok := readArray(m, in, n, subscriptionSize)
	if !ok {
		return EFAULT
	}
	var ready, first []byte
	wait := int64(0)
	for i := range n {
		s := subs[i*subscriptionSize : (i+1)*subscriptionSize]
		ev := make([]byte, eventSize)
		copy(ev, s[:8]) // userdata
		ev[10] = s[8]   // type
		switch fd := binary.LittleEndian.Uint32(s[16:]); {
		case s[8] == eventTypeClock:
			d, errno := e.remaining(s)
			if errno == ESUCCESS && d > 0 {
				if first == nil || d < wait {
					wait, first = d, ev
				}
				continue
			}
			binary.LittleEndian.PutUint16(ev[8:], uint16(errno))
		case s[8] == eventTypeFdRead && fd == 0:
			binary.LittleEndian.PutUint16(ev[24:], eventHangup)
		case s[8] == eventTypeFdWrite && (fd == 1 || fd == 2):
		case s[8] == eventTypeFdRead || s[8] == eventTypeFdWrite:
			binary.LittleEndian.PutUint16(ev[8:], uint16(EBADF))
		default:
			binary.LittleEndian.PutUint16(ev[8:], uint16(EINVAL))
		}
		ready = append(ready, ev...)
	}
	if len(ready) == 0 {
		if errno := e.wait(ctx, wait); errno != ESUCCESS {
			return errno
		}
		ready = first
	}
	if !m.Write(out, ready) {
		return EFAULT
	}
	return fault(putU32(m, uint32(a[3]), uint32(len(ready)/eventSize)))
}

// remaining returns how long until a clock subscription is due, in
// nanoseconds (zero or less when it is due), or the errno of its clock id.
func (e *Env) remaining(s []byte) (int64, Errno) {
	id := binary.LittleEndian.Uint32(s[16:])
	if errno := clockID(uint64(id)); errno != ESUCCESS {
		return 0, errno
	}
	timeout := int64(min(binary.LittleEndian.Uint64(s[24:]), math.MaxInt64))
	if binary.LittleEndian.Uint16(s[40:])&subClockAbsTime == 0 {
		return timeout, ESUCCESS
	}
	now := e.monotonic()
	if id == clockRealtime {
		now = e.wallClock()
	}
	if now < 0 && timeout > math.MaxInt64+now {
		return math.MaxInt64, ESUCCESS
	}
	return timeout - now, ESUCCESS
}

// wait waits d (> 0) nanoseconds. A real environment sleeps, or answers
// EINTR when ctx ends first. A deterministic one never sleeps: its monotonic
// clock jumps ahead and the wait is recorded for TakeSleep; past maxWaits in
// one call it panics with ErrBlockingSleep.
func (e *Env) wait(ctx context.Context, d int64) Errno {
	if e.deterministic {
		e.mono = addSaturated(e.mono, d)
		e.slept = time.Duration(addSaturated(int64(e.slept), d))
		if e.waits++; e.waits > maxWaits {
			panic(ErrBlockingSleep)
		}
		return ESUCCESS
	}
	t := time.NewTimer(time.Duration(d))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return EINTR
	case <-t.C:
		return ESUCCESS
	}
}

// addSaturated returns a+d (d >= 0), or the largest int64 if that
// overflows.
func addSaturated(a, d int64) int64 {
	if a > math.MaxInt64-d {
		return math.MaxInt64
	}
	return a + d
}
