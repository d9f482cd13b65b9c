package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
)

// TestCheck: Check finds nothing in a schema the store wrote, while the
// store has it open, and each broken invariant in one edited by hand.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Schema(t)
	s, err := Open(url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"i1", "i2"} {
		if err := s.CreateInstance(ctx, store.NewInstance{ID: id, Name: "Greeting", ModuleHash: "h1", Input: json.RawMessage(`"world"`), Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Check(ctx, url)
	if err != nil || len(c.Problems) > 0 {
		t.Fatalf("Check: %v, %q", err, c.Problems)
	}
	exec(t, url, `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at) VALUES ('gone', 'ExternalEvent', '{"kind":"ExternalEvent"}', 0, 0);
		INSERT INTO history (instance_id, execution_id, event_id, kind, payload) VALUES
			('i1', 1, 1, 'OrchestrationStarted', '{"id":1,"kind":"OrchestrationStarted","time":"2026-11-22T12:00:00Z"}'),
			('i1', 1, 3, 'TimerFired', '{"id":3,"kind":"TimerFired","time":"2026-11-22T12:00:00Z","scheduleId":2}');
		UPDATE instances SET last_event_id = 3 WHERE id = 'i1'`)
	c, err = Check(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`messages: 1 rows for instance "gone", which does not exist`,
		`instance "i1" execution 1: event 3 follows event 1 (ids run from 1 without gaps)`,
	}
	if !slices.Equal(c.Problems, want) {
		t.Errorf("Check found\n%s\nwant\n%s", strings.Join(c.Problems, "\n"), strings.Join(want, "\n"))
	}
	if last := c.Ran[len(c.Ran)-1]; last != "the store's invariants (instances 2, executions 1, events 2, messages 3)" {
		t.Errorf("Check ran %q", c.Ran)
	}
}
