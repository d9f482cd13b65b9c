package sqlite

import "github.com/durabox/durabox/store/internal/sqlstore"

// Times, message visibility, failures and tokens are encoded as in both
// SQL stores (see sqlstore).
var (
	nanos     = sqlstore.Nanos
	fromNanos = sqlstore.FromNanos

	encodeFailure = sqlstore.EncodeFailure
	decodeFailure = sqlstore.DecodeFailure
	nullIfEmpty   = sqlstore.NullIfEmpty
	newToken      = sqlstore.NewToken
)

const (
	visibleNow     = sqlstore.VisibleNow
	visibleToStart = sqlstore.VisibleToStart
	firstDue       = sqlstore.FirstDue
)
