package plainjson

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// marshalCases holds a value of every type Marshal writes itself, at the
// edges of its range, strings with every character that encoding/json
// escapes, and values it leaves to encoding/json.
var marshalCases = []any{
	nil, true, false,
	0, 1, -1, math.MaxInt, math.MinInt,
	int8(math.MinInt8), int8(math.MaxInt8), int16(math.MinInt16), int16(math.MaxInt16),
	int32(math.MinInt32), int32(math.MaxInt32), int64(math.MinInt64), int64(math.MaxInt64),
	uint(0), uint(math.MaxUint), uint8(math.MaxUint8), uint16(math.MaxUint16),
	uint32(math.MaxUint32), uint64(math.MaxUint64),
	"", "x", "Hello, world!", "~ !#$%'()*+,-./:;=?@[]^_`{|}",
	`"`, `\`, "<", ">", "&", "a<b", "tab\there", "new\nline", "\x00", "\x7f",
	"é", "日本", "\u2028", "\xff", "bad \xc3 utf-8",
	1.5, float32(2), []int{1, 2}, map[string]int{"a": 1}, struct{ A int }{1},
	json.RawMessage(` {"a" : 1} `), json.Number("12"),
}

// Marshal writes the bytes encoding/json writes, whether it writes them
// itself or hands the value on.
func TestMarshalIsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, v := range marshalCases {
		want, wantErr := json.Marshal(v)
		got, err := Marshal(v)
		if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("Marshal(%#v) = %s, %v; encoding/json: %s, %v", v, got, err, want, wantErr)
		}
	}
}

// unmarshalInputs holds JSON that Unmarshal decodes itself for some
// destination, and JSON it leaves to encoding/json: whitespace, escapes,
// fractions, exponents, leading zeros, overflows, null, wrong types and
// bytes that are not JSON.
var unmarshalInputs = []string{
	`0`, `1`, `-1`, `-0`, `42`, `127`, `128`, `-128`, `-129`, `255`, `256`,
	`32767`, `32768`, `65535`, `65536`, `2147483647`, `2147483648`, `-2147483649`,
	`4294967295`, `4294967296`, `9223372036854775807`, `9223372036854775808`,
	`-9223372036854775808`, `-9223372036854775809`, `18446744073709551615`,
	`18446744073709551616`, `01`, `-01`, `1.0`, `1e3`, `1E3`, `-`, `+1`, ` 1`, `1 `,
	`true`, `false`, `null`, `True`, `tru`,
	`""`, `"x"`, `"Hello, world!"`, `"a<b"`, `"\u003c"`, `"\n"`, `"a\"b"`, `"\\"`,
	`"é"`, "\"\x7f\"", "\"\x01\"", "\"\xff\"", `"unterminated`, `"`, `"a"b"`, `x"`,
	`[1]`, `{}`, ``, `1x`, `"1"`,
}

// Unmarshal leaves the destination and returns the error exactly as
// encoding/json does, for every destination type it decodes itself.
func TestUnmarshalIsEncodingJSON(t *testing.T) {
	t.Parallel()
	destinations := []func() any{
		func() any { return new(string) }, func() any { return new(bool) },
		func() any { return new(int) }, func() any { return new(int8) }, func() any { return new(int16) },
		func() any { return new(int32) }, func() any { return new(int64) },
		func() any { return new(uint) }, func() any { return new(uint8) }, func() any { return new(uint16) },
		func() any { return new(uint32) }, func() any { return new(uint64) },
		func() any { return new(float64) }, func() any { return new(any) },
	}
	for _, in := range unmarshalInputs {
		for _, dst := range destinations {
			want, got := dst(), dst()
			wantErr := json.Unmarshal([]byte(in), want)
			err := Unmarshal([]byte(in), got)
			if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("Unmarshal(%q) into %T = %v, %v; encoding/json: %v, %v",
					in, got, reflect.ValueOf(got).Elem(), err, reflect.ValueOf(want).Elem(), wantErr)
			}
		}
	}
}

// A value decoded into a destination that already holds one replaces it,
// as with encoding/json, and null leaves it.
func TestUnmarshalOverwrites(t *testing.T) {
	t.Parallel()
	n, s := 7, "old"
	if err := Unmarshal([]byte(`3`), &n); err != nil || n != 3 {
		t.Fatalf("into 7: %d, %v", n, err)
	}
	if err := Unmarshal([]byte(`null`), &s); err != nil || s != "old" {
		t.Fatalf("null into %q: %q, %v", "old", s, err)
	}
}

// Every string and integer the fuzzer finds encodes and decodes as with
// encoding/json.
func FuzzSameAsEncodingJSON(f *testing.F) {
	for _, in := range unmarshalInputs {
		f.Add(in, int64(len(in)))
	}
	f.Fuzz(func(t *testing.T, s string, n int64) {
		for _, v := range []any{s, n, int8(n), uint32(n), uint64(n)} {
			want, wantErr := json.Marshal(v)
			got, err := Marshal(v)
			if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("Marshal(%#v) = %s, %v; encoding/json: %s, %v", v, got, err, want, wantErr)
			}
		}
		for _, in := range []string{s, `"` + s + `"`, strings.TrimSpace(s)} {
			var gotS, wantS string
			var gotN, wantN int64
			var gotU, wantU uint16
			for _, c := range []struct{ got, want any }{{&gotS, &wantS}, {&gotN, &wantN}, {&gotU, &wantU}} {
				wantErr := json.Unmarshal([]byte(in), c.want)
				err := Unmarshal([]byte(in), c.got)
				if !reflect.DeepEqual(c.got, c.want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Fatalf("Unmarshal(%q) into %T: %v, %v; encoding/json: %v, %v", in, c.got,
						reflect.ValueOf(c.got).Elem(), err, reflect.ValueOf(c.want).Elem(), wantErr)
				}
			}
		}
	})
}
