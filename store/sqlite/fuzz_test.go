package sqlite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// FuzzStoredHistory stores arbitrary bytes as the event rows of an
// execution (a row a line, numbered from 1), reads them back as a host
// does (Store.History), and hands what decodes to the engine as a host
// would: a turn that replays it on a guest that emits what it records
// (mirror), the plan of a reset to each of its events, the work it has in
// flight, each event described as errors and the CLI describe it, and a
// turn that takes the events as new messages. A row that does not decode
// is refused, naming the row; a history no engine writes is refused with
// engine.ErrCorruptHistory (or, for a reset, engine.ErrResetPoint); a
// message that cannot apply is dropped; nothing panics. The seed corpus is the engine's
// golden histories and the cases in testdata/fuzz/FuzzStoredHistory.
func FuzzStoredHistory(f *testing.F) {
	golden, err := filepath.Glob("../../engine/testdata/golden/*.json")
	if err != nil || len(golden) == 0 {
		f.Fatalf("no golden histories in ../../engine/testdata/golden (%v)", err)
	}
	for _, path := range golden {
		f.Add(goldenRows(f, path))
	}
	// Without a sync at each commit: the rows are thrown away.
	s := openAt(f, filepath.Join(f.TempDir(), "test.db"), Options{Durability: DurabilityNormal})
	withInstance(f, s)
	f.Fuzz(func(t *testing.T, rows []byte) {
		storeRows(t, s, bytes.Split(rows, []byte("\n")))
		history, err := s.History(ctx, "i1", 1)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) || !strings.HasPrefix(err.Error(), `sqlite: history of "i1": corrupt row: event `) {
				t.Fatalf("History: %v; want a refusal that names the event", err)
			}
			return
		}
		replayStored(t, history)
	})
}

// storeRows makes rows the event rows of instance i1's execution 1, in
// place of those it had.
func storeRows(t *testing.T, s *Store, rows [][]byte) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM history WHERE instance_id = 'i1'`); err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO history (instance_id, execution_id, event_id, payload) VALUES ('i1', 1, ?, ?)`, i+1, row); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// replayStored hands a history read from the store to the engine, which
// must take it or refuse it as corrupt; and the same events as messages,
// as a turn takes the rows of the store's queue.
func replayStored(t *testing.T, history []engine.Event) {
	for i := range history {
		_ = history[i].String()
	}
	res, err := turn(history, engine.TurnInput{History: history, Now: t0})
	switch {
	case err != nil && !errors.Is(err, engine.ErrCorruptHistory):
		t.Fatalf("Turn: %v; want a result, or engine.ErrCorruptHistory", err)
	case err == nil && res.Status == engine.StatusPending && slices.ContainsFunc(history, func(ev engine.Event) bool { return ev.Kind == engine.OrchestrationStarted }):
		// (A history of markers alone is an instance moved before it
		// started.)
		t.Fatalf("Turn on %d events, one of them OrchestrationStarted, left the instance Pending", len(history))
	case err == nil:
		engine.InFlight(history)
	}
	for n := range len(history) {
		if _, err := engine.PlanReset(history, int64(n+1)); err != nil && !errors.Is(err, engine.ErrResetPoint) && !errors.Is(err, engine.ErrCorruptHistory) {
			t.Fatalf("PlanReset to %d: %v; want a plan, engine.ErrResetPoint or engine.ErrCorruptHistory", n+1, err)
		}
	}
	if _, err := turn(history, engine.TurnInput{Messages: history, Now: t0}); err != nil {
		t.Fatalf("Turn on %d messages: %v; want a result", len(history), err)
	}
}

// goldenRows returns the events of one of the engine's golden histories,
// a JSON object per line, as the rows FuzzStoredHistory takes.
func goldenRows(f *testing.F, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	b = bytes.TrimPrefix(b, []byte("{\"events\": [\n"))
	b = bytes.TrimSuffix(bytes.TrimSpace(b), []byte("]}"))
	var rows [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		rows = append(rows, bytes.TrimSuffix(line, []byte(",")))
	}
	return bytes.Join(rows, []byte("\n"))
}
