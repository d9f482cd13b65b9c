package sqlite

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// Times and message visibility are those of both SQL stores (see
// sqlstore.Nanos and sqlstore.VisibleNow).
var (
	nanos     = sqlstore.Nanos
	fromNanos = sqlstore.FromNanos
	dueAt     = sqlstore.DueAt
)

const (
	visibleNow     = sqlstore.VisibleNow
	visibleToStart = sqlstore.VisibleToStart
	firstDue       = sqlstore.FirstDue
)

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
