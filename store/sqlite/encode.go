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

// visibleNow is the visible_at of a message visible at once.
const visibleNow = 0

// dueAt is the visible_at of a timer due at t: after visibleNow even for a
// time before 1970, so that due timers and messages visible at once stay
// apart (see nextInstance).
func dueAt(t time.Time) int64 { return max(nanos(t), visibleNow+1) }

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
