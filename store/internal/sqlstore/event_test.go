package sqlstore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
)

// storedEvent is an event as a store writes it (json.Marshal), and
// whether the scanner reads it (not a failure, no escaped string).
type storedEvent struct {
	json  []byte
	scans bool
}

// storedEvents are events of every shape a store writes.
func storedEvents(t testing.TB) []storedEvent {
	at := time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC)
	fire := at.Add(time.Hour)
	events := []struct {
		ev    engine.Event
		scans bool
	}{
		{engine.Event{ID: 1, Kind: engine.OrchestrationStarted, Time: at, Name: "Test", InstanceID: "i1", Input: json.RawMessage(`{"a":[1,"x\"y",{"b":null}],"c":"é\u2028<"}`)}, true},
		{engine.Event{ID: 2, Kind: engine.ActivityScheduled, Time: at, Name: "SayHello", Input: json.RawMessage(`"world"`), TimeoutMs: 30000}, true},
		{engine.Event{ID: 3, Kind: engine.ActivityCompleted, Time: at, ScheduleID: 2, Result: json.RawMessage(`-12.5e3`)}, true},
		{engine.Event{ID: 4, Kind: engine.TimerCreated, Time: at, FireAt: &fire}, true},
		{engine.Event{ID: 5, Kind: engine.TimerFired, Time: fire, ScheduleID: 4, FireAt: &fire}, true},
		{engine.Event{ID: 6, Kind: engine.ExternalEvent, Time: at.In(time.FixedZone("", 5*3600)), ScheduleID: 9, Name: "approve", Result: json.RawMessage(`true`)}, true},
		{engine.Event{ID: 7, Kind: engine.ExternalEvent, Time: at, ScheduleID: 9, Name: "<&>", Result: json.RawMessage(`false`)}, false},
		{engine.Event{ID: 8, Kind: engine.ActivityFailed, Time: at, ScheduleID: 2, Failure: &engine.Failure{Message: "boom", Details: "stack"}}, false},
		{engine.Event{ID: 9, Kind: engine.OrchestrationCancelRequested, Time: at, Reason: "tab\there"}, false},
		{engine.Event{ID: 10, Kind: engine.CustomStatusSet, Time: at, CustomStatus: "half way"}, true},
		{engine.Event{ID: 11, Kind: engine.ExecutionReset, Time: at, Module: "m2", FromModule: "m1", SeedExecution: 3, Reason: "kept 1..10"}, true},
		{engine.Event{ID: -9223372036854775808, Kind: engine.OrchestrationCompleted, Result: json.RawMessage(`[]`)}, true},
	}
	var out []storedEvent
	for _, e := range events {
		b, err := json.Marshal(e.ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, storedEvent{b, e.scans})
	}
	return out
}

// The forms json.Marshal writes are read without encoding/json, or the
// decoder's speed-up does nothing.
func TestStoredEventsTakeTheScanner(t *testing.T) {
	t.Parallel()
	for _, e := range storedEvents(t) {
		var ev engine.Event
		if got := (&eventScanner{b: e.json, names: map[string]string{}}).event(&ev); got != e.scans {
			t.Errorf("scanned %v, want %v: %s", got, e.scans, e.json)
		}
	}
}

// FuzzDecodeEvent holds eventDecoder to json.Unmarshal's answer: the same
// event, or an error where it errs.
func FuzzDecodeEvent(f *testing.F) {
	for _, e := range storedEvents(f) {
		f.Add(e.json)
	}
	for _, s := range []string{
		`{}`, ` {}`, `{} `, `{"id":1,}`, `{"id":1`, `{"ID":1}`, `{"id":01}`, `{"id":1.0}`, `{"id":1e2}`, `{"id":-0}`,
		`{"id":9223372036854775808}`, `{"id":"1"}`, `{"id":null}`, `{"id":1,"id":2}`, `{"kind":"A\u0042"}`,
		`{"kind":"a` + "\xff" + `"}`, `{"name":"a` + "\x01" + `"}`, `{"input":null}`, `{"input": 1}`, `{"input":1 }`,
		`{"input":{"a":1}}`, `{"input":[1,2}`, `{"input":"x\\"}`, `{"input":tru}`, `{"input":}`, `{"result":"a","result":[1]}`,
		`{"time":"2026-11-22T12:00:00+01:00"}`, `{"time":"nope"}`, `{"time":null}`, `{"fireAt":"2026-11-22T12:00:00Z"}`,
		`{"failure":{"message":"m"}}`, `{"historyWarning":50000}`, `{"other":1}`, `{"id":1}x`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want engine.Event
		var d eventDecoder
		gotErr := d.decode(b, &got)
		// A second decode takes its names from the first.
		var again engine.Event
		if err := d.decode(b, &again); (err == nil) != (gotErr == nil) || (err == nil && !sameEvent(again, got)) {
			t.Fatalf("%q: decoded again: %+v, %v", b, again, err)
		}
		wantErr := json.Unmarshal(b, &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: decodeEvent says %v, json.Unmarshal %v", b, gotErr, wantErr)
		}
		if wantErr == nil && !sameEvent(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// sameEvent reports whether two events are the same, times compared by
// their instant and their JSON form (two parses of one offset make two
// *time.Location values).
func sameEvent(a, b engine.Event) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil || !bytes.Equal(ja, jb) || !a.Time.Equal(b.Time) || (a.FireAt == nil) != (b.FireAt == nil) {
		return false
	}
	if a.FireAt != nil && !a.FireAt.Equal(*b.FireAt) {
		return false
	}
	a.Time, b.Time, a.FireAt, b.FireAt = time.Time{}, time.Time{}, nil, nil
	return reflect.DeepEqual(a, b)
}
