// Package plainjson encodes and decodes the JSON the SDK moves on every
// step: activity inputs, results, an orchestration's input and output. For
// the plainest values (nil, bools, integers, and strings of printable ASCII
// that need no escaping) it writes and reads the bytes itself, with strconv;
// everything else goes to encoding/json. Either way the bytes and the errors
// are encoding/json's: a command's input is compared byte for byte with
// history, so an encoding must never change under a recorded instance.
//
// It exists because encoding/json works by reflection, which is slow in
// WebAssembly: an int result and a string input cost a wasm guest about
// 3.5 µs through encoding/json, a fifth of a replayed step (RATIONALE.md,
// "Why does the SDK encode plain values itself?").
package plainjson

import (
	"encoding/json"
	"strconv"
)

// Marshal returns json.Marshal(v).
func Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return []byte("null"), nil
	case bool:
		return strconv.AppendBool(nil, v), nil
	case string:
		if plain(v) {
			b := make([]byte, 0, len(v)+2)
			b = append(b, '"')
			b = append(b, v...)
			return append(b, '"'), nil
		}
	case int:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int8:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int16:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(nil, v, 10), nil
	case uint:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint8:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint16:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint32:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(nil, v, 10), nil
	}
	return json.Marshal(v)
}

// Unmarshal does what json.Unmarshal(raw, out) does.
func Unmarshal(raw []byte, out any) error {
	if decoded(raw, out) {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// decoded decodes raw into out and reports true when both are among the
// plain cases, where the outcome is json.Unmarshal's with no error. In
// every other case it leaves out alone.
func decoded(raw []byte, out any) bool {
	switch out := out.(type) {
	case *string:
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || !plain(string(raw[1:len(raw)-1])) {
			return false
		}
		*out = string(raw[1 : len(raw)-1])
		return true
	case *bool:
		switch string(raw) {
		case "true":
			*out = true
		case "false":
			*out = false
		default:
			return false
		}
		return true
	case *int:
		return decodeInt(raw, out, strconv.IntSize)
	case *int8:
		return decodeInt(raw, out, 8)
	case *int16:
		return decodeInt(raw, out, 16)
	case *int32:
		return decodeInt(raw, out, 32)
	case *int64:
		return decodeInt(raw, out, 64)
	case *uint:
		return decodeUint(raw, out, strconv.IntSize)
	case *uint8:
		return decodeUint(raw, out, 8)
	case *uint16:
		return decodeUint(raw, out, 16)
	case *uint32:
		return decodeUint(raw, out, 32)
	case *uint64:
		return decodeUint(raw, out, 64)
	}
	return false
}

func decodeInt[T int | int8 | int16 | int32 | int64](raw []byte, out *T, bits int) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if !integer(digits) {
		return false
	}
	n, err := strconv.ParseInt(string(raw), 10, bits)
	if err != nil {
		return false
	}
	*out = T(n)
	return true
}

func decodeUint[T uint | uint8 | uint16 | uint32 | uint64](raw []byte, out *T, bits int) bool {
	if !integer(raw) {
		return false
	}
	n, err := strconv.ParseUint(string(raw), 10, bits)
	if err != nil {
		return false
	}
	*out = T(n)
	return true
}

// integer reports whether b is a JSON number with no sign, fraction or
// exponent: 0, or digits that do not start with 0.
func integer(b []byte) bool {
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plain reports whether s is written as itself inside a JSON string by
// encoding/json: printable ASCII other than the quote, the backslash and
// the three characters it escapes for HTML (<, >, &).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
