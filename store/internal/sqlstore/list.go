package sqlstore

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Finished is the condition on instances that selects the finished ones.
var Finished = func() string {
	var quoted []string
	for _, s := range engine.TerminalStatuses() {
		quoted = append(quoted, "'"+string(s)+"'")
	}
	return "status IN (" + strings.Join(quoted, ", ") + ")"
}()

// Where builds the condition of a WHERE clause and its arguments, in a
// store's placeholders.
type Where struct {
	conds []string
	// Args are the arguments of the condition, in order.
	Args []any
	// placeholder is the text that stands for argument n (from 1).
	placeholder func(n int) string
	// finishedAt is the dialect's column of when an instance finished
	// (Dialect.FinishedAt).
	finishedAt string
}

// NewWhere returns an empty condition whose argument n (from 1) is written
// placeholder(n).
func NewWhere(placeholder func(n int) string) *Where { return &Where{placeholder: placeholder} }

// Arg adds an argument and returns its placeholder.
func (w *Where) Arg(v any) string {
	w.Args = append(w.Args, v)
	return w.placeholder(len(w.Args))
}

// Add adds a condition, whose arguments were added with Arg.
func (w *Where) Add(cond string) { w.conds = append(w.conds, cond) }

// String is the conditions joined by AND; "1 = 1" when there are none.
func (w *Where) String() string {
	if len(w.conds) == 0 {
		return "1 = 1"
	}
	return strings.Join(w.conds, " AND ")
}

// Filter adds the conditions on instances that f makes.
func (w *Where) Filter(f store.InstanceFilter) {
	if len(f.Statuses) > 0 {
		in := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			in[i] = w.Arg(string(s))
		}
		w.Add("status IN (" + strings.Join(in, ", ") + ")")
	}
	for _, c := range []struct {
		column, value string
	}{{"name", f.Name}, {"module_hash", f.ModuleHash}, {"parent_id", f.ParentID}} {
		if c.value != "" {
			w.Add(c.column + " = " + w.Arg(c.value))
		}
	}
	if f.IDPrefix != "" {
		// In byte order (SQLite's, and PostgreSQL's "C" collation of the
		// id), a range of the primary key.
		w.Add("id >= " + w.Arg(f.IDPrefix))
		if end, ok := prefixEnd(f.IDPrefix); ok {
			w.Add("id < " + w.Arg(end))
		}
	}
	if !f.CreatedAfter.IsZero() {
		w.Add("created_at >= " + w.Arg(Nanos(f.CreatedAfter)))
	}
	if !f.CreatedBefore.IsZero() {
		w.Add("created_at < " + w.Arg(Nanos(f.CreatedBefore)))
	}
	switch {
	case f.FinishedBefore.IsZero():
	case w.finishedAt != "":
		w.Add(w.finishedAt + " < " + w.Arg(Nanos(f.FinishedBefore)))
	default:
		w.Add(Finished)
		w.Add("updated_at < " + w.Arg(Nanos(f.FinishedBefore)))
	}
	if !f.ProgressedBefore.IsZero() || len(f.WaitingOn) > 0 {
		// The statuses name the index on (status, updated_at) where there
		// is one (store/sqlite), else the one on (status, created_at).
		w.Add("status IN (" + w.Arg(string(store.Unfinished[0])) + ", " + w.Arg(string(store.Unfinished[1])) + ")")
	}
	if !f.ProgressedBefore.IsZero() {
		w.Add("updated_at < " + w.Arg(Nanos(f.ProgressedBefore)))
	}
	if len(f.WaitingOn) > 0 {
		or := make([]string, len(f.WaitingOn))
		for i, k := range f.WaitingOn {
			or[i] = "waiting_on LIKE " + w.Arg("%,"+string(k)+",%")
		}
		w.Add("(" + strings.Join(or, " OR ") + ")")
	}
	if f.Where != nil {
		w.Add(w.expr(f.Where))
	}
}

// WaitingOn is the waiting_on column of an instance that waits on kinds:
// each kind between commas (",activity,timer,"), for a LIKE to find;
// empty for none.
func WaitingOn(kinds []engine.WaitKind) string {
	if len(kinds) == 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range kinds {
		b.WriteString("," + string(k))
	}
	return b.String() + ","
}

// prefixEnd returns the least string greater than every string that
// begins with prefix, in byte order, if there is one.
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// Cursor is the cursor of the page that follows an instance: its creation
// time (Unix nanoseconds) and its sequence in the store (rowid, seq), with
// a checksum of both, in unpadded URL-safe base64. The checksum lets
// ParseCursor refuse a cursor no store made (made up, cut short, changed),
// where the bare numbers would list an empty or a wrong page as if it were
// one.
func Cursor(created, seq int64) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(created))
	b = binary.BigEndian.AppendUint64(b, uint64(seq))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorBytes is the length of a cursor, decoded: two int64 and the
// crc32 of both.
const cursorBytes = 8 + 8 + 4

// ParseCursor reads a cursor Cursor made, or returns an error wrapping
// store.ErrBadCursor.
func ParseCursor(c string) (created, seq int64, err error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || len(b) != cursorBytes || crc32.ChecksumIEEE(b[:16]) != binary.BigEndian.Uint32(b[16:]) {
		return 0, 0, fmt.Errorf("%w: %q is not a cursor this store made", store.ErrBadCursor, c)
	}
	return int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:])), nil
}

// Execution describes execution id, which has n events in history, from
// the JSON of its first and last event; what of them does not decode (a
// damaged or edited row) it leaves out.
func Execution(id, n int64, first, last []byte) store.Execution {
	x := store.Execution{ID: id, Events: n}
	var f, l engine.Event
	if json.Unmarshal(first, &f) == nil {
		x.StartedAt = f.Time
	}
	if json.Unmarshal(last, &l) == nil && l.IsTerminal() {
		x.EndedAt, x.End = l.Time, l.Kind
	}
	return x
}

// WithCurrent returns the executions with history, oldest first, followed
// by the current one when it has not begun.
func WithCurrent(executions []store.Execution, current int64) []store.Execution {
	if len(executions) == 0 || executions[len(executions)-1].ID != current {
		return append(executions, store.Execution{ID: current})
	}
	return executions
}

// ListQuery returns the query of a page of ListInstances, w being the
// condition of q.Filter: the columns of the instances q selects followed
// by seq (the store's order of creation, which breaks ties of
// created_at), newest first, one more than q.Limit.
func ListQuery(w *Where, q store.InstanceQuery, columns, seq string) (string, error) {
	if q.Limit < 1 {
		return "", fmt.Errorf("list instances: the limit is %d; it must be 1 or more", q.Limit)
	}
	if q.After != "" {
		created, n, err := ParseCursor(q.After)
		if err != nil {
			return "", fmt.Errorf("list instances: %w", err)
		}
		w.Add("(created_at, " + seq + ") < (" + w.Arg(created) + ", " + w.Arg(n) + ")")
	}
	return `SELECT ` + columns + `, ` + seq + ` FROM instances WHERE ` + w.String() +
		` ORDER BY created_at DESC, ` + seq + ` DESC LIMIT ` + w.Arg(q.Limit+1), nil
}

// Page reads the rows of a ListQuery into a page of at most limit
// instances; scan reads a row's summary and its seq.
func Page(rows Rows, limit int, scan func(row Rows, seq *int64) (store.InstanceSummary, error)) (store.InstancePage, error) {
	page := store.InstancePage{Instances: []store.InstanceSummary{}}
	var last int64
	for rows.Next() {
		if len(page.Instances) == limit {
			// There is one more: the page ends at the one before.
			i := page.Instances[len(page.Instances)-1]
			page.Next = Cursor(Nanos(i.CreatedAt), last)
			break
		}
		i, err := scan(rows, &last)
		if err != nil {
			return page, err
		}
		page.Instances = append(page.Instances, i)
	}
	return page, rows.Err()
}
