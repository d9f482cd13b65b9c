package sqlstore

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/durabox/durabox/engine"
)

// Nanos is how the stores keep a time: Unix nanoseconds.
func Nanos(t time.Time) int64 { return t.UnixNano() }

// FromNanos is the UTC time of Unix nanoseconds n.
func FromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// A message's visible_at says when it is visible and, for those visible at
// once, which comes first (see each store's nextInstances).
const (
	// VisibleNow marks a message for an instance that has begun, visible
	// at once.
	VisibleNow = 0
	// VisibleToStart marks the start of a new instance, a child's too,
	// visible at once, and served after the work of instances that have
	// begun, in the fair order of starts (Dialect.InsertStart).
	VisibleToStart = 1
	// FirstDue is the earliest visible_at of a timer.
	FirstDue = 2
)

// DueAt is the visible_at of a timer due at t: at least FirstDue, even for
// a time before 1970, so that timers and messages visible at once stay
// apart.
func DueAt(t time.Time) int64 { return max(Nanos(t), FirstDue) }

// EncodeFailure is the JSON of f, nil (NULL) when f is.
func EncodeFailure(f *engine.Failure) *string { return encodeJSON(f) }

// encodeJSON is the JSON of v, nil (NULL) when v is.
func encodeJSON[T any](v *T) *string {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	s := string(b)
	return &s
}

// DecodeFailure decodes what EncodeFailure made. A text that does not
// decode (a damaged or edited row) is the failure's message, so that the
// instance can still be read.
func DecodeFailure(s *string) *engine.Failure {
	if s == nil {
		return nil
	}
	f := &engine.Failure{}
	if json.Unmarshal([]byte(*s), f) != nil {
		return &engine.Failure{Message: *s}
	}
	return f
}

// EncodeRetry is the JSON of an activity call's retry policy, nil (NULL)
// when it has none.
func EncodeRetry(p *engine.RetryPolicy) *string { return encodeJSON(p) }

// DecodeRetry decodes what EncodeRetry made. A text that does not decode
// (a damaged or edited row) is no policy: the task's attempt is its last.
func DecodeRetry(s *string) *engine.RetryPolicy {
	if s == nil {
		return nil
	}
	p := &engine.RetryPolicy{}
	if json.Unmarshal([]byte(*s), p) != nil {
		return nil
	}
	return p
}

// NullIfEmpty keeps absent JSON as NULL rather than empty bytes.
func NullIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// NewToken returns a random lock token.
func NewToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
