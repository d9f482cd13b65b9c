package sqlstore

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

func TestParseCursor(t *testing.T) {
	t.Parallel()
	created, seq, err := ParseCursor(Cursor(-5, 42))
	if err != nil || created != -5 || seq != 42 {
		t.Fatalf("ParseCursor(Cursor(-5, 42)) = %d, %d, %v; want -5, 42, nil", created, seq, err)
	}
	made := Cursor(1795764479233105330, 20)
	for _, c := range []string{"", "12", "12.", ".3", "a.3", "1.b", "1.2.3", "1.2", "-1.-1", "0.0", "1795764479233105330.20",
		made[:len(made)-1], made + "A", "B" + made[1:], made[:4] + "=" + made[5:]} {
		t.Run(c, func(t *testing.T) {
			if _, _, err := ParseCursor(c); !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("ParseCursor(%q) = %v; want ErrBadCursor", c, err)
			}
		})
	}
}

func TestWhereFilter(t *testing.T) {
	t.Parallel()
	numbered := func(n int) string { return "$" + strconv.Itoa(n) }
	t0 := time.Unix(0, 7)
	tests := []struct {
		name       string
		f          store.InstanceFilter
		finishedAt string // Dialect.FinishedAt
		want       string
		args       []any
	}{
		{"everything", store.InstanceFilter{}, "", "1 = 1", nil},
		{"statuses", store.InstanceFilter{Statuses: []engine.Status{engine.StatusRunning, engine.StatusFailed}},
			"", "status IN ($1, $2)", []any{"Running", "Failed"}},
		{"name and parent", store.InstanceFilter{Name: "n", ParentID: "p"}, "", "name = $1 AND parent_id = $2", []any{"n", "p"}},
		{"id prefix", store.InstanceFilter{IDPrefix: "ab"}, "", "id >= $1 AND id < $2", []any{"ab", "ac"}},
		{"id prefix of 0xff", store.InstanceFilter{IDPrefix: "\xff"}, "", "id >= $1", []any{"\xff"}},
		{"finished before", store.InstanceFilter{FinishedBefore: t0}, "", Finished + " AND updated_at < $1", []any{int64(7)}},
		{"finished before, finished_at", store.InstanceFilter{FinishedBefore: t0}, "finished_at", "finished_at < $1", []any{int64(7)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWhere(numbered)
			w.finishedAt = tt.finishedAt
			w.Filter(tt.f)
			if got := w.String(); got != tt.want {
				t.Errorf("condition %q; want %q", got, tt.want)
			}
			if len(w.Args) != len(tt.args) {
				t.Fatalf("args %v; want %v", w.Args, tt.args)
			}
			for i := range w.Args {
				if w.Args[i] != tt.args[i] {
					t.Errorf("arg %d is %#v; want %#v", i+1, w.Args[i], tt.args[i])
				}
			}
		})
	}
}
