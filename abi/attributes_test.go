package abi

import (
	"strings"
	"testing"
	"time"
)

func TestAttributesRoundTrip(t *testing.T) {
	t.Parallel()
	in := []Attribute{
		{Name: "amount", Type: AttributeFloat, Float: 2.5},
		{Name: "count", Type: AttributeInt, Int: -1 << 63},
		{Name: "customer", Type: AttributeString, String: "c-42"},
		{Name: "due", Type: AttributeTime, Time: time.Date(2026, 11, 27, 20, 0, 0, 1, time.UTC)},
		{Name: "gone"},
		{Name: "paid", Type: AttributeBool},
		{Name: "tags", Type: AttributeKeywords, Keywords: []string{"a", "b"}},
	}
	b := EncodeAttributes(in)
	want := `{"amount":{"float":2.5},"count":{"int":-9223372036854775808},"customer":{"string":"c-42"},"due":{"time":"2026-11-27T20:00:00.000000001Z"},` +
		`"gone":null,"paid":{"bool":false},"tags":{"keywords":["a","b"]}}`
	if string(b) != want {
		t.Fatalf("EncodeAttributes = %s; want %s", b, want)
	}
	out, err := DecodeAttributes(b)
	if err != nil {
		t.Fatal(err)
	}
	if again := EncodeAttributes(out); string(again) != want {
		t.Fatalf("decoded and encoded again: %s", again)
	}
}

func TestAttributesRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"not an object", `[1]`, `search attributes are a JSON object from names to typed values: "[1]"`},
		{"a bad name", `{"1st":null}`, `search attribute name "1st" has '1' at byte 0`},
		{"a reserved name", `{"Status":null}`, `search attribute name "Status" is reserved`},
		{"a long name", `{"` + strings.Repeat("a", 65) + `":null}`, `is 65 bytes`},
		{"two types", `{"a":{"int":1,"bool":true}}`, `search attribute a: its value "{\"int\":1,\"bool\":true}" must have exactly one type`},
		{"no type", `{"a":{}}`, `must have exactly one type`},
		{"an unknown type", `{"a":{"date":"x"}}`, `is not one of {"string": …}`},
		{"a fractional int", `{"a":{"int":1.5}}`, `search attribute a: 1.5 is not a 64-bit integer`},
		{"a bad time", `{"a":{"time":"today"}}`, `search attribute a: "today" is not a time in RFC 3339 form`},
		{"a long string", `{"a":{"string":"` + strings.Repeat("x", 257) + `"}}`, `is 257 bytes; a value is at most 256`},
		{"an empty list", `{"a":{"keywords":[]}}`, `search attribute a: a keyword list is empty; it has 1 to 32 elements (null removes the attribute)`},
		{"a long list", `{"a":{"keywords":[` + strings.Repeat(`"x",`, 32) + `"x"]}}`, `a keyword list of 33 elements; at most 32`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := DecodeAttributes([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("DecodeAttributes(%s) = %v; want an error with %q", c.in, err, c.want)
			}
		})
	}
}

func FuzzDecodeAttributes(f *testing.F) {
	f.Add([]byte(`{"a":{"int":1},"b":null,"c":{"keywords":["x"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		attrs, err := DecodeAttributes(b)
		if err != nil {
			return
		}
		// What decodes encodes to bytes that decode to the same.
		again, err := DecodeAttributes(EncodeAttributes(attrs))
		if err != nil || string(EncodeAttributes(again)) != string(EncodeAttributes(attrs)) {
			t.Fatalf("%s: decoded, encoded and decoded again: %v", b, err)
		}
	})
}
