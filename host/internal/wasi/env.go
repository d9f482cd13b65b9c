package wasi

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// ErrBlockingSleep is the error for an orchestration that waited on the
// clock (see Env.TakeSleep): only time.Sleep, time.After and the other timers
// of the time package do that.
var ErrBlockingSleep = errors.New("the orchestration blocked on time.Sleep or a timer of the time package, which would not survive a restart; use ctx.Sleep or ctx.NewTimer, the SDK's durable timers")

// ExitError stops an instance that called proc_exit (os.Exit).
type ExitError struct {
	Code uint32
}

func (e *ExitError) Error() string { return fmt.Sprintf("wasi: exit with code %d", e.Code) }

// Env answers one instance's WASI calls. It is used by one call at a time.
type Env struct {
	deterministic bool
	// logical is the deterministic wall clock, in Unix nanoseconds; mono the
	// deterministic monotonic clock, which only moves forward.
	logical, mono int64
	// slept is how long a deterministic guest waited on the clock since the
	// last TakeSleep.
	slept time.Duration
	rand  *rand.ChaCha8
	// start anchors the real monotonic clock.
	start   time.Time
	environ []string
	stdout  io.Writer
	stderr  io.Writer
	// allowHTTP holds the hosts (and host:ports) HTTP requests may reach;
	// pending is the encoded response http_response hands over next.
	allowHTTP map[string]bool
	pending   []byte
}

// NewDeterministic returns the environment of an orchestration: every answer
// is a function of seed and of the logical time set with SetTime. Nil
// writers discard.
func NewDeterministic(seed [32]byte, stdout, stderr io.Writer) *Env {
	// The monotonic clock starts above zero: Go's runtime refuses to start
	// on a clock that reads zero.
	return &Env{deterministic: true, mono: 1, rand: rand.NewChaCha8(seed), stdout: orDiscard(stdout), stderr: orDiscard(stderr)}
}

// NewReal returns the environment of an activity: the real clock, real
// randomness, and the environment variables environ ("KEY=value"). Nil
// writers discard.
func NewReal(environ []string, stdout, stderr io.Writer) *Env {
	return &Env{start: time.Now(), environ: environ, stdout: orDiscard(stdout), stderr: orDiscard(stderr)}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// SetTime sets the logical time (Unix nanoseconds) a deterministic
// environment reports. The monotonic clock follows it but never goes back.
func (e *Env) SetTime(unixNanos int64) {
	e.logical = unixNanos
	e.mono = max(e.mono, unixNanos)
}

// TakeSleep returns how long a deterministic guest waited on the clock since
// the last call, and resets it. Such a wait never blocks: the monotonic clock
// jumps ahead instead, so the guest's runtime carries on (and can still
// report a deadlock or a fatal error). An orchestration step that waited at
// all is an error for the caller to report (ErrBlockingSleep).
func (e *Env) TakeSleep() time.Duration {
	d := e.slept
	e.slept = 0
	return d
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

func (e *Env) fillRandom(b []byte) {
	if e.deterministic {
		e.rand.Read(b)
		return
	}
	crand.Read(b)
}

// environBlock returns the environment as WASI lays it out: each entry
// NUL-terminated.
func (e *Env) environBlock() (count int, block []byte) {
	var sb strings.Builder
	for _, kv := range e.environ {
		sb.WriteString(kv)
		sb.WriteByte(0)
	}
	return len(e.environ), []byte(sb.String())
}
