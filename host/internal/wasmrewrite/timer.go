package wasmrewrite

import "slices"

// An orchestration may not keep a timer of Go's time package: its clock
// moves only from step to step, so the timer would not fire when due, and
// a restart would lose it. A blocking wait on one shows itself (the guest
// waits on the clock through WASI), but a timer the guest starts and does
// not wait on (time.AfterFunc, a timer or ticker it only polls, the timer
// of a context with a deadline) makes no call the host sees. So the
// rewrite marks the functions of a Go module that start and stop one, and
// a runtime reads after each call how many timers the call left running,
// and which function started the first of them.
//
// It adds three mutable i32 globals, zero at start: $call, the code of the
// outermost marking function entered since the last timer started;
// $timer, the code of the function that started the first timer of those
// running; and $live, how many are running. It inserts in each function
// of TimerCalls but the first, with c its code (its index in TimerCalls,
// plus one),
//
//	global.get $call
//	i32.eqz
//	if
//	  i32.const c
//	  global.set $call
//	end
//
// in the first, time.newTimer, which each of the others calls to start
// its timer,
//
//	global.get $live
//	i32.eqz
//	if
//	  global.get $call
//	  i32.const 1
//	  global.get $call
//	  select              ;; $call, or 1 if it is zero
//	  global.set $timer
//	end
//	global.get $live
//	i32.const 1
//	i32.add
//	global.set $live
//	i32.const 0
//	global.set $call
//
// and in each function of timerStops (a timer stopped, an AfterFunc timer
// firing),
//
//	global.get $live
//	if
//	  global.get $live
//	  i32.const 1
//	  i32.sub
//	  global.set $live
//	end
//
// So a timer started and stopped within a call (as crypto/rand's first
// read starts and stops one, to warn of a kernel that blocks) leaves
// nothing, and one left running is named by the outermost function that
// started it (context.WithTimeout, rather than the time.AfterFunc it
// calls), or by time.newTimer when none was entered (time.After and
// time.Tick are inlined into their callers, and reach time.newTimer
// through time.NewTimer and time.NewTicker). The count errs on the side of
// silence: a timer stopped twice counts as two stopped, and one that Reset
// starts again is not counted. A runtime sets the globals to zero at the
// start of every call, so that what it reads after the call is that
// call's. Nothing else reads or writes them, and each mark leaves the
// stack as it found it: the guest sees no difference.
//
// A mark goes right after the function's stack check (the if that calls
// runtime.morestack when the goroutine's stack is too small), not at the
// top of the wasm function: Go enters a wasm function at its top again
// whenever a goroutine resumes in it (after its stack grew, or after it
// was switched out below it) and jumps from there to where it was, while
// the code after the stack check runs once a call (the check itself runs
// again after a growth). A marked function whose stack check the rewrite
// does not find gets no mark.
//
// Functions are found by the names the module's name section gives them,
// which the Go linker writes unless told not to (-ldflags=-s); a module
// without one gets no marks, and its timers go unseen.

// The exports of the globals of the timer marks.
const (
	// TimerLiveExport holds how many timers of the time package the call
	// left running.
	TimerLiveExport = "durabox:timer-live"
	// TimerExport holds the code of the function that started the first
	// of them (see TimerCall).
	TimerExport = "durabox:timer"
	// TimerCallExport holds the code of the outermost function of
	// TimerCalls entered since a timer last started.
	TimerCallExport = "durabox:timer-call"
)

// TimerCalls are the functions of a Go module the rewrite marks as
// starting a timer: time.newTimer, which starts every timer of the time
// package but time.Sleep's, and the functions that call it.
var TimerCalls = []string{
	"time.newTimer",
	"context.WithDeadline", "context.WithDeadlineCause", "context.WithTimeout", "context.WithTimeoutCause",
	"time.AfterFunc", "time.NewTimer", "time.NewTicker",
}

// timerStops are the functions the rewrite marks as ending a timer: Timer.Stop's and Ticker.Stop's, and the one that runs an
// AfterFunc timer's function when it fires.
var timerStops = []string{"time.stopTimer", "time.goFunc"}

// TimerCall returns the function of TimerCalls whose code is code (a value
// of the TimerExport global), or "" for zero or a code it does not know.
func TimerCall(code uint32) string {
	if code == 0 || code > uint32(len(TimerCalls)) {
		return ""
	}
	return TimerCalls[code-1]
}

// stackChecks are the functions a Go function's stack check calls.
var stackChecks = []string{"runtime.morestack", "runtime.morestack_noctxt"}

// timerNames are the names of the functions the rewrite looks for:
// TimerCalls and timerStops, which it marks, and stackChecks, after whose
// call it puts a mark.
func timerNames() []string { return slices.Concat(TimerCalls, timerStops, stackChecks) }

// markSite finds where a timer mark goes in a function body: right after
// the end of the if that holds its call of a stack check. Fed each of the
// body's instructions in turn, it reports true once, after the one the
// mark follows.
type markSite struct {
	// stackChecks holds the function indices of stackChecks.
	stackChecks map[uint32]bool
	// depth is how many blocks are open; check the depth of the one
	// around the stack check's call, once found.
	depth, check int
	placed       bool
}

// after takes the instruction op with immediates imm, and reports whether
// the mark goes after it.
func (s *markSite) after(op byte, imm []byte) bool {
	switch {
	case s.placed:
	case op >= 0x02 && op <= 0x04 || op == 0x1f: // block, loop, if, try_table
		s.depth++
	case op == 0x0b: // end
		s.depth--
		s.placed = s.check > 0 && s.depth < s.check
		return s.placed
	case op == 0x10 && s.check == 0: // call
		r := reader{b: imm}
		if fn, err := r.u32(); err == nil && s.stackChecks[fn] {
			s.check = s.depth
		}
	}
	return false
}

// timerGlobals returns the global section's entries of $call, $timer and
// $live: mutable i32s, zero at start.
func timerGlobals() []byte {
	var b []byte
	for range 3 {
		b = append(b, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	}
	return b
}

// timerGlobalsAt are the indices of the timer marks' globals.
type timerGlobalsAt struct{ call, timer, live uint32 }

// mark returns the instructions inserted after the stack check of the
// function timerNames()[i].
func (g timerGlobalsAt) mark(i int) []byte {
	switch {
	case i >= len(TimerCalls): // a stop
		b := appendU32([]byte{0x23}, g.live)                     // global.get $live
		b = appendU32(append(b, 0x04, 0x40, 0x23), g.live)       // if (no result), global.get $live
		b = appendU32(append(b, 0x41, 0x01, 0x6b, 0x24), g.live) // i32.const 1, i32.sub, global.set $live
		return append(b, 0x0b)                                   // end
	case i > 0: // a function that calls time.newTimer
		b := appendU32([]byte{0x23}, g.call)  // global.get $call
		b = append(b, 0x45, 0x04, 0x40, 0x41) // i32.eqz, if (no result), i32.const
		b = appendS32(b, int32(i+1))
		b = appendU32(append(b, 0x24), g.call) // global.set $call
		return append(b, 0x0b)                 // end
	}
	b := appendU32([]byte{0x23}, g.live)                     // global.get $live
	b = appendU32(append(b, 0x45, 0x04, 0x40, 0x23), g.call) // i32.eqz, if (no result), global.get $call
	b = appendU32(append(b, 0x41, 0x01, 0x23), g.call)       // i32.const 1, global.get $call
	b = appendU32(append(b, 0x1b, 0x24), g.timer)            // select, global.set $timer
	b = appendU32(append(b, 0x0b, 0x23), g.live)             // end, global.get $live
	b = appendU32(append(b, 0x41, 0x01, 0x6a, 0x24), g.live) // i32.const 1, i32.add, global.set $live
	return appendU32(append(b, 0x41, 0x00, 0x24), g.call)    // i32.const 0, global.set $call
}
