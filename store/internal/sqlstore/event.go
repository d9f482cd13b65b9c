package sqlstore

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/durabox/durabox/engine"
)

// eventDecoder decodes the JSON form of events, as json.Unmarshal does.
// The form the stores write (json.Marshal's: no whitespace, no escapes in
// names, no nulls, no failure) is read by a scanner that knows Event's
// fields (BenchmarkHistory_10k in store/sqlite reads in half the time,
// with a third of the allocations), which a cold replay of a long history
// pays for every event; anything else (an escape, an unknown
// or differently cased key, whitespace, a null, a number that is not a
// plain integer, a failure) goes to json.Unmarshal, which decides.
// FuzzDecodeEvent holds the two to the same answer. Kinds and names are
// kept once per decoder, so that a long history holds one copy of each
// (and allocates none for the repeats).
type eventDecoder struct {
	names map[string]string
}

// decode decodes b into a zero ev.
func (d *eventDecoder) decode(b []byte, ev *engine.Event) error {
	if d.names == nil {
		d.names = map[string]string{}
	}
	if (&eventScanner{b: b, names: d.names}).event(ev) {
		return nil
	}
	*ev = engine.Event{}
	return json.Unmarshal(b, ev)
}

// eventScanner reads the JSON form json.Marshal writes for an Event. Each
// method reports false for anything it does not read exactly as
// encoding/json would, and then the caller falls back to it.
type eventScanner struct {
	b     []byte
	i     int
	names map[string]string
}

func (s *eventScanner) event(ev *engine.Event) bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return s.i == len(s.b)
	}
	for {
		key, ok := s.plain()
		if !ok || !s.byte(':') {
			return false
		}
		switch string(key) {
		case "id":
			ok = s.int(&ev.ID)
		case "kind":
			var k string
			k, ok = s.name()
			ev.Kind = engine.EventKind(k)
		case "time":
			ok = s.time(&ev.Time)
		case "scheduleId":
			ok = s.int(&ev.ScheduleID)
		case "name":
			ev.Name, ok = s.name()
		case "instanceId":
			ev.InstanceID, ok = s.string()
		case "input":
			ev.Input, ok = s.raw()
		case "timeoutMs":
			ok = s.int(&ev.TimeoutMs)
		case "result":
			ev.Result, ok = s.raw()
		case "fireAt":
			var t time.Time
			ok = s.time(&t)
			ev.FireAt = &t
		case "reason":
			ev.Reason, ok = s.string()
		case "customStatus":
			ev.CustomStatus, ok = s.string()
		case "module":
			ev.Module, ok = s.string()
		case "fromModule":
			ev.FromModule, ok = s.string()
		case "seedExecution":
			ok = s.int(&ev.SeedExecution)
		case "historyWarning":
			ok = s.int(&ev.HistoryWarning)
		case "by":
			ev.By, ok = s.name()
		default:
			return false
		}
		if !ok {
			return false
		}
		if s.byte('}') {
			return s.i == len(s.b)
		}
		if !s.byte(',') {
			return false
		}
	}
}

// byte consumes c if it is next.
func (s *eventScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plain reads a string with no escape and no control character, and
// returns its bytes.
func (s *eventScanner) plain() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// string reads a plain string of valid UTF-8 (encoding/json replaces
// invalid bytes).
func (s *eventScanner) string() (string, bool) {
	v, ok := s.plain()
	if !ok || !utf8.Valid(v) {
		return "", false
	}
	return string(v), true
}

// name reads a string as string does, keeping one copy of each.
func (s *eventScanner) name() (string, bool) {
	start := s.i
	v, ok := s.plain()
	if !ok {
		return "", false
	}
	if n, ok := s.names[string(v)]; ok {
		return n, true
	}
	s.i = start
	n, ok := s.string()
	if ok {
		s.names[n] = n
	}
	return n, ok
}

// int reads an integer written as JSON writes one: an optional minus, then
// 0 or digits not starting with 0, that fits an int64.
func (s *eventScanner) int(v *int64) bool {
	start := s.i
	s.byte('-')
	digits := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || (n > 1 && s.b[digits] == '0') {
		return false
	}
	if s.i < len(s.b) {
		if c := s.b[s.i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	x, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	*v = x
	return err == nil
}

// time reads a plain string as encoding/json does for a time.Time: it
// hands the quoted string to UnmarshalJSON.
func (s *eventScanner) time(t *time.Time) bool {
	start := s.i
	if _, ok := s.plain(); !ok {
		return false
	}
	return t.UnmarshalJSON(s.b[start:s.i]) == nil
}

// raw reads an object, array, string, number, true or false with no
// whitespace at either end, and returns a copy of its bytes, as a
// json.RawMessage field receives them.
func (s *eventScanner) raw() (json.RawMessage, bool) {
	start := s.i
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if !s.skipString() {
				return nil, false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return s.rawEnd(start)
			}
			depth--
		case ',':
			if depth == 0 {
				return s.rawEnd(start)
			}
		}
		s.i++
	}
	return nil, false
}

// rawEnd returns the raw value from start to the scanner's position,
// refusing an empty one, one with whitespace at either end, a null, and
// anything that is not valid JSON.
func (s *eventScanner) rawEnd(start int) (json.RawMessage, bool) {
	v := s.b[start:s.i]
	if len(v) == 0 || isSpace(v[0]) || isSpace(v[len(v)-1]) || v[0] == 'n' || !json.Valid(v) {
		return nil, false
	}
	return append(json.RawMessage(nil), v...), true
}

// skipString moves past a string, escapes and all; whether it is valid is
// json.Valid's to say.
func (s *eventScanner) skipString() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return true
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
