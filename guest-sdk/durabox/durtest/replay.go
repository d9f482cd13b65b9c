package durtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/durabox/durabox/engine"
)

// Replay replays a recorded history of one execution, such as one saved
// with durabox history ID --json (see ReadHistory), against the
// orchestrations of the test binary, natively, and returns nil if the
// orchestration reproduces it exactly, or the error that says where it
// diverges: an *engine.NondeterminismError that shows both sides, or its
// crash. This is how a test checks that changed code still replays the
// histories of instances already running.
func Replay(history []engine.Event) error {
	if len(history) == 0 || history[0].Kind != engine.OrchestrationStarted {
		return errors.New("durtest: a history begins with OrchestrationStarted; this one does not")
	}
	if name := history[0].Name; !registered(name) {
		return fmt.Errorf("durtest: the history is of orchestration %q, which the test binary does not register", name)
	}
	return replay(history, 5*time.Second)
}

// replay replays history on a fresh runtime whose steps run for timeout at
// most.
func replay(history []engine.Event, timeout time.Duration) error {
	if len(history) == 0 {
		return nil
	}
	res, err := newGuest(timeout).turn(engine.NewExecution(), engine.TurnInput{History: history, Now: history[len(history)-1].Time})
	if err != nil {
		return err
	}
	return res.Err
}

// ReadHistory reads a history from a JSON file: what durabox history ID
// --json prints ({"events": [...]}), or a bare array of events.
func ReadHistory(path string) ([]engine.Event, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("durtest: %w", err)
	}
	var wrapped struct {
		Events []engine.Event `json:"events"`
	}
	var events []engine.Event
	if err := json.Unmarshal(raw, &wrapped); err == nil && len(wrapped.Events) > 0 {
		events = wrapped.Events
	} else if err := json.Unmarshal(raw, &events); err != nil || len(events) == 0 {
		return nil, fmt.Errorf("durtest: %s holds no history: save one with durabox history ID --json > %s", path, path)
	}
	// durabox history --json indents the JSON values inside events too; a
	// replay compares their bytes as the host recorded them, compact.
	for i := range events {
		for _, v := range []*json.RawMessage{&events[i].Input, &events[i].Result} {
			var b bytes.Buffer
			if len(*v) > 0 && json.Compact(&b, *v) == nil {
				*v = b.Bytes()
			}
		}
	}
	return events, nil
}
