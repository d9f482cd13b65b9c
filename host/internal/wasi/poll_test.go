package wasi

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// sub is one poll_oneoff subscription.
type sub struct {
	userdata uint64
	typ      byte
	// fd for an fd subscription, clock id for a clock.
	fd      uint32
	timeout uint64
	abs     bool
}

// event is one poll_oneoff event.
type event struct {
	userdata uint64
	errno    Errno
	typ      byte
	flags    uint16
}

func clockSub(userdata uint64, d time.Duration) sub {
	return sub{userdata: userdata, typ: eventTypeClock, fd: clockMonotonic, timeout: uint64(d)}
}

// poll calls poll_oneoff on subs and returns its errno and events.
func poll(t *testing.T, ctx context.Context, e *Env, subs ...sub) (Errno, []event) {
	t.Helper()
	const out = 4096
	m := make(memory, 8192)
	for i, s := range subs {
		b := m[i*subscriptionSize:]
		binary.LittleEndian.PutUint64(b, s.userdata)
		b[8] = s.typ
		binary.LittleEndian.PutUint32(b[16:], s.fd)
		binary.LittleEndian.PutUint64(b[24:], s.timeout)
		if s.abs {
			binary.LittleEndian.PutUint16(b[40:], subClockAbsTime)
		}
	}
	errno := call(t, ctx, e, m, "poll_oneoff", 0, out, uint64(len(subs)), 8000)
	var events []event
	for i := range u32(m, 8000) {
		b := m[out+i*eventSize:]
		events = append(events, event{binary.LittleEndian.Uint64(b), Errno(binary.LittleEndian.Uint16(b[8:])), b[10], binary.LittleEndian.Uint16(b[24:])})
	}
	return errno, events
}

func TestPollDeterministic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		subs       []sub
		wantEvents []event
		// wantSlept is how far the monotonic clock jumped, and what
		// TakeSleep reports.
		wantSlept time.Duration
	}{
		{"a clock fires after a recorded wait",
			[]sub{clockSub(7, 10*time.Millisecond)},
			[]event{{7, 0, eventTypeClock, 0}}, 10 * time.Millisecond},
		{"the first of two clocks fires",
			[]sub{clockSub(1, time.Second), clockSub(2, time.Millisecond)},
			[]event{{2, 0, eventTypeClock, 0}}, time.Millisecond},
		{"a clock already due fires without a wait",
			[]sub{clockSub(1, 0)},
			[]event{{1, 0, eventTypeClock, 0}}, 0},
		{"an absolute clock in the past fires without a wait",
			[]sub{{userdata: 1, typ: eventTypeClock, fd: clockRealtime, timeout: 500, abs: true}},
			[]event{{1, 0, eventTypeClock, 0}}, 0},
		{"an absolute clock waits until it is due",
			[]sub{{userdata: 1, typ: eventTypeClock, fd: clockMonotonic, timeout: 1500, abs: true}},
			[]event{{1, 0, eventTypeClock, 0}}, 500},
		{"fds answer at once, and clocks wait",
			[]sub{clockSub(1, time.Second), {userdata: 2, typ: eventTypeFdRead, fd: 0}, {userdata: 3, typ: eventTypeFdWrite, fd: 2}, {userdata: 4, typ: eventTypeFdRead, fd: 5}},
			[]event{{2, 0, eventTypeFdRead, eventHangup}, {3, 0, eventTypeFdWrite, 0}, {4, EBADF, eventTypeFdRead, 0}}, 0},
		{"a CPU-time clock is not supported",
			[]sub{{userdata: 1, typ: eventTypeClock, fd: 2, timeout: 5}},
			[]event{{1, ENOTSUP, eventTypeClock, 0}}, 0},
		{"an unknown subscription type",
			[]sub{{userdata: 1, typ: 9}},
			[]event{{1, EINVAL, 9, 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := deterministic()
			e.SetTime(1000)
			errno, events := poll(t, context.Background(), e, tt.subs...)
			if errno != ESUCCESS || len(events) != len(tt.wantEvents) {
				t.Fatalf("errno %d, events %+v; want %+v", errno, events, tt.wantEvents)
			}
			for i := range events {
				if events[i] != tt.wantEvents[i] {
					t.Errorf("event %d is %+v, want %+v", i, events[i], tt.wantEvents[i])
				}
			}
			if mono := e.monotonic(); mono != 1000+int64(tt.wantSlept) {
				t.Errorf("monotonic clock %d, want %d", mono, 1000+int64(tt.wantSlept))
			}
			if d := e.TakeSleep(); d != tt.wantSlept {
				t.Errorf("TakeSleep = %s, want %s", d, tt.wantSlept)
			}
			if d := e.TakeSleep(); d != 0 {
				t.Errorf("TakeSleep again = %s, want 0", d)
			}
		})
	}
}

func TestPollBadCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if errno, _ := poll(t, ctx, deterministic()); errno != EINVAL {
		t.Errorf("no subscriptions: errno %d, want EINVAL", errno)
	}
	// 48 * 0x5555556 overflows 32 bits.
	if errno := call(t, ctx, deterministic(), make(memory, 64), "poll_oneoff", 0, 0, 0x5555556, 0); errno != EFAULT {
		t.Errorf("2^26 subscriptions: errno %d, want EFAULT", errno)
	}
}

// A deterministic guest that keeps waiting in one call is stopped.
func TestPollStopsASleepLoop(t *testing.T) {
	t.Parallel()
	e := deterministic()
	for range maxWaits {
		poll(t, context.Background(), e, clockSub(1, time.Second))
	}
	defer func() {
		if err, _ := recover().(error); !errors.Is(err, ErrBlockingSleep) {
			t.Fatalf("wait %d: recovered %v, want ErrBlockingSleep", maxWaits+1, err)
		}
		if d := e.TakeSleep(); d != (maxWaits+1)*time.Second {
			t.Errorf("TakeSleep = %s", d)
		}
	}()
	poll(t, context.Background(), e, clockSub(1, time.Second))
}

func TestPollReal(t *testing.T) {
	t.Parallel()
	e := NewReal(nil, nil, nil)
	start := time.Now()
	if errno, events := poll(t, context.Background(), e, clockSub(1, time.Millisecond)); errno != ESUCCESS || len(events) != 1 || events[0].userdata != 1 {
		t.Fatalf("errno %d, events %+v", errno, events)
	}
	if d := time.Since(start); d < time.Millisecond {
		t.Errorf("returned after %s, before the clock was due", d)
	}
	if d := e.TakeSleep(); d != 0 {
		t.Errorf("a real environment recorded a sleep of %s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if errno, _ := poll(t, ctx, e, clockSub(1, time.Hour)); errno != EINTR {
		t.Errorf("cancelled context: errno %d, want EINTR", errno)
	}
}
