package sqlite

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/durabox/durabox/engine"
)

// Times are stored as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// A message's visible_at says when it is visible and, for those visible at
// once, which comes first (see nextInstance).
const (
	// visibleNow marks a message for an instance that has begun, visible at
	// once.
	visibleNow = 0
	// visibleToStart marks the start of a new instance, visible at once,
	// and served after the work of instances that have begun.
	visibleToStart = 1
	// firstDue is the earliest visible_at of a timer.
	firstDue = 2
)

// dueAt is the visible_at of a timer due at t: at least firstDue, even for
// a time before 1970, so that timers and messages visible at once stay
// apart.
func dueAt(t time.Time) int64 { return max(nanos(t), firstDue) }

func encodeFailure(f *engine.Failure) sql.NullString {
	if f == nil {
		return sql.NullString{}
	}
	b, _ := json.Marshal(f)
	return sql.NullString{String: string(b), Valid: true}
}

func decodeFailure(s sql.NullString) (*engine.Failure, error) {
	if !s.Valid {
		return nil, nil
	}
	f := &engine.Failure{}
	return f, json.Unmarshal([]byte(s.String), f)
}

func newToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// nullIfEmpty keeps absent JSON as NULL rather than an empty blob.
func nullIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
